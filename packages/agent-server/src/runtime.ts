import { join } from "node:path";
import { SqliteWriteLock, warnIfPostgresTrustsAnyone } from "@berth/service-kit";
import type { ServerSettings } from "./config/settings.js";
import type { Logger } from "./logger.js";
import type { RunBroker } from "./runs/brokers/broker.js";
import { InProcessBroker } from "./runs/brokers/in-process-broker.js";
import { MainSideBroker } from "./runs/brokers/thread-port-broker.js";
import { type ExecutionPlacement, executionPlacement } from "./runs/execution/execution-thread.js";
import { createSqliteStorage } from "./storage/sqlite/index.js";
import type { Storage } from "./storage/types.js";

export interface Backends {
  storage: Storage;
  broker: RunBroker;
  /** Only this process uses the database (embedded SQLite without BERTH_SQLITE_SHARED). */
  exclusive: boolean;
  /**
   * Workers also look for claimable runs this often: a signal may be lost
   * (LISTEN/NOTIFY has no replay), and a run a stopping process puts back in
   * the queue wakes nobody.
   */
  workerPollMs?: number;
  /** The broker cannot hand a run's events and output to other processes (signals only): they are read from the database. */
  readsRunsFromDatabase: boolean;
  describe: string;
  /** Where runs execute: with `thread` or `beside`, the broker is a MainSideBroker. */
  placement: ExecutionPlacement;
  /** Shared with the execution thread, whose connection writes the same file. */
  sqliteWriteLock?: SqliteWriteLock;
}

/** How often workers poll the queue when processes coordinate through signals (LISTEN/NOTIFY, a shared SQLite table). */
const SIGNAL_MODE_POLL_MS = 250;

/**
 * SQLite under the data directory by default; PostgreSQL with DATABASE_URL.
 * Redis (REDIS_URL) carries live streams and signals across processes;
 * PostgreSQL alone does too, more slowly: signals through LISTEN/NOTIFY,
 * events read back from the log. Processes sharing a SQLite file
 * (BERTH_SQLITE_SHARED) coordinate the same way, signals going through a table.
 */
export async function openBackends(settings: ServerSettings, dataDir: string, logger: Logger): Promise<Backends> {
  const sqliteFile = join(dataDir, "berth.sqlite");
  const authChecks = checkServerAuthentication(settings, logger);
  const sharedSqlite = !settings.databaseUrl && settings.sqliteShared;
  // Runs may execute in a thread of their own, on its own connection to the file (execution-thread.ts).
  const placement: ExecutionPlacement =
    settings.databaseUrl || sharedSqlite ? "main" : executionPlacement(settings.executionThread);
  const threaded = placement !== "main";
  const sqliteWriteLock = threaded ? new SqliteWriteLock() : undefined;
  // The scale-out backends load only when configured: embedded SQLite does not pay for their drivers.
  const storage = settings.databaseUrl
    ? await (await import("./storage/postgres/index.js")).createPostgresStorage(settings.databaseUrl, {
        poolSize: settings.postgresPoolSize,
        synchronousCommit: settings.postgresSynchronousCommit,
      })
    : createSqliteStorage(dataDir, settings.sqliteSynchronous, { shared: settings.sqliteShared, writeLock: sqliteWriteLock });
  const notifyUrl = settings.redisUrl ? undefined : settings.databaseUrl;
  try {
    const broker = settings.redisUrl
      ? await (await import("./runs/brokers/redis-broker.js")).RedisBroker.connect(
          settings.redisUrl,
          settings.redisPrefix,
          logger,
        )
      : notifyUrl
        ? await (await import("./runs/brokers/postgres-broker.js")).PostgresBroker.connect(
            notifyUrl,
            storage.runs,
            settings.redisPrefix,
            logger,
          )
        : sharedSqlite
          ? await sharedSqliteBroker(sqliteFile, storage, logger)
          : threaded
            ? new MainSideBroker()
            : new InProcessBroker();
    if (notifyUrl) {
      logger.warn(
        "DATABASE_URL without REDIS_URL: slower mode, processes coordinate through PostgreSQL LISTEN/NOTIFY " +
          "and follow runs elsewhere from the event log (tens of ms behind); set REDIS_URL for live streams",
      );
    }
    // Started with the connections above, so this waits at most for the rest of one connection attempt.
    await authChecks;
    const signalsOnly = !settings.redisUrl && (notifyUrl !== undefined || sharedSqlite);
    const store = settings.databaseUrl ? "postgres" : `sqlite (${sqliteFile}${sharedSqlite ? ", shared" : ""})`;
    return {
      storage,
      broker,
      exclusive: !settings.databaseUrl && !sharedSqlite,
      workerPollMs: signalsOnly ? SIGNAL_MODE_POLL_MS : undefined,
      readsRunsFromDatabase: signalsOnly,
      placement,
      sqliteWriteLock,
      describe: `${store}${settings.redisUrl ? " + redis" : notifyUrl ? " + listen/notify" : sharedSqlite ? " + signals table" : ""}${placement === "thread" ? " + execution thread" : placement === "beside" ? " + execution thread under load" : ""}`,
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}

async function sharedSqliteBroker(file: string, storage: Storage, logger: Logger): Promise<RunBroker> {
  const [{ SignalBroker }, { SqliteSignalTransport }] = await Promise.all([
    import("./runs/brokers/signal-broker.js"),
    import("./runs/brokers/sqlite-signal-transport.js"),
  ]);
  const broker = new SignalBroker(new SqliteSignalTransport(file, logger), storage.runs, logger);
  await broker.listen();
  return broker;
}

/**
 * Warns when PostgreSQL or Redis lets in a client without a password
 * (docs/security.md, Data plane); each check is one connection attempt and
 * never fails the start.
 */
async function checkServerAuthentication(settings: ServerSettings, logger: Logger): Promise<void> {
  const checks: Promise<void>[] = [];
  if (settings.databaseUrl) checks.push(warnIfPostgresTrustsAnyone(settings.databaseUrl, "DATABASE_URL", logger));
  if (settings.redisUrl) {
    const redisUrl = settings.redisUrl;
    checks.push(import("./runs/brokers/redis-auth-check.js").then((check) => check.warnIfRedisTrustsAnyone(redisUrl, logger)));
  }
  const failed = (await Promise.allSettled(checks)).find((result) => result.status === "rejected");
  if (failed) logger.debug({ err: failed.reason }, "checking the database servers' authentication failed");
}
