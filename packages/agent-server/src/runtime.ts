import { join } from "node:path";
import type { ServerSettings } from "./config/settings.js";
import type { Logger } from "./logger.js";
import type { RunBroker } from "./runs/broker.js";
import { InProcessBroker } from "./runs/in-process-broker.js";
import { PostgresBroker } from "./runs/postgres-broker.js";
import { RedisBroker } from "./runs/redis-broker.js";
import { createPostgresStorage } from "./storage/postgres/index.js";
import { createSqliteStorage } from "./storage/sqlite/index.js";
import type { Storage } from "./storage/types.js";

export interface Backends {
  storage: Storage;
  broker: RunBroker;
  /** Only this process uses the database (embedded SQLite). */
  exclusive: boolean;
  /** Workers also look for claimable runs this often (wake-ups may be lost: LISTEN/NOTIFY has no replay). */
  workerPollMs?: number;
  /** The broker cannot hand a run's events and output to other processes (LISTEN/NOTIFY): they are read from the database. */
  readsRunsFromDatabase: boolean;
  describe: string;
}

/** How often workers poll the queue when processes coordinate through LISTEN/NOTIFY. */
const NOTIFY_MODE_POLL_MS = 250;

/**
 * SQLite under the data directory by default; PostgreSQL with DATABASE_URL.
 * Redis (REDIS_URL) carries live streams and signals across processes;
 * PostgreSQL alone does too, more slowly: signals through LISTEN/NOTIFY,
 * events read back from the log.
 */
export async function openBackends(settings: ServerSettings, dataDir: string, logger: Logger): Promise<Backends> {
  const storage = settings.databaseUrl
    ? await createPostgresStorage(settings.databaseUrl, { poolSize: settings.postgresPoolSize })
    : createSqliteStorage(dataDir, settings.sqliteSynchronous);
  const notifyUrl = settings.redisUrl ? undefined : settings.databaseUrl;
  try {
    const broker = settings.redisUrl
      ? await RedisBroker.connect(settings.redisUrl, settings.redisPrefix)
      : notifyUrl
        ? await PostgresBroker.connect(notifyUrl, storage.runs, settings.redisPrefix, logger)
        : new InProcessBroker();
    if (notifyUrl) {
      logger.warn(
        "DATABASE_URL without REDIS_URL: slower mode, processes coordinate through PostgreSQL LISTEN/NOTIFY " +
          "and follow runs elsewhere from the event log (tens of ms behind); set REDIS_URL for live streams",
      );
    }
    return {
      storage,
      broker,
      exclusive: !settings.databaseUrl,
      workerPollMs: notifyUrl ? NOTIFY_MODE_POLL_MS : undefined,
      readsRunsFromDatabase: notifyUrl !== undefined,
      describe: `${settings.databaseUrl ? "postgres" : `sqlite (${join(dataDir, "berth.sqlite")})`}${settings.redisUrl ? " + redis" : notifyUrl ? " + listen/notify" : ""}`,
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
