import { join } from "node:path";
import pg from "pg";
import { freePort, TEST_BACKEND, testDatabaseName } from "@berth/test-support";
import { type BerthProcess, newDataDir, startBerth } from "@berth/test-support";
import { holdSqliteWriteLock, SizeLimitedDir, sqliteIntegrity, terminateConnections, userIds } from "./outages.js";
import { PrivateRedis } from "./redis-server.js";

/** What an outage did: a note for the report, or why it could not be made here. */
export type OutageResult = { done: string } | { skipped: string };

/**
 * The servers of one backend, and the outages that can be made to them: the
 * SQLite server alone (killed and restarted on its port), or an API process,
 * two worker processes, a PostgreSQL database and a private Redis.
 */
export interface ChaosTopology {
  /** The API's base URL (stable across restarts). */
  url: string;
  /** Every API that must answer again after an outage (on PostgreSQL also a pair in LISTEN/NOTIFY mode, without Redis). */
  apis: string[];
  /** kill -9 of the process executing runs; it (or a replacement) is started again. */
  killWorker(): Promise<OutageResult>;
  /** The database stops answering for a moment. */
  loseDatabase(): Promise<OutageResult>;
  restartRedis(): Promise<OutageResult>;
  /** The directory the data lives in, on a small disk of its own (undefined: the reason it could not be made). */
  disk: SizeLimitedDir | string;
  /** Every process that should be running is (a replacement started, too). */
  processesAlive(): Promise<boolean>;
  /** The database is sound ("ok"), where it can be checked from outside. */
  integrity(): string | undefined;
  /** The end of every process's output, for a failure's diagnosis. */
  outputs(): string;
  close(): Promise<void>;
}

const tail = (process: BerthProcess, name: string) => `--- ${name}\n${process.output().slice(-6000)}`;

/** Keeps the SQLite data directory on a 32 MB tmpfs when the test may mount one. */
async function sqliteTopology(): Promise<ChaosTopology> {
  let disk: SizeLimitedDir | string;
  try {
    disk = await SizeLimitedDir.mount(32);
  } catch (error) {
    disk = `no size-limited directory (mounting a tmpfs needs root): ${(error as Error).message}`;
  }
  const dataDir = typeof disk === "string" ? newDataDir("berth-chaos-") : disk.path;
  const port = String(await freePort());
  const start = () => startBerth({ dataDir, extraArgs: ["--port", port] });
  let server = await start();
  const restarted: BerthProcess[] = [];
  return {
    url: server.url,
    apis: [server.url],
    disk,
    async killWorker() {
      await server.kill();
      restarted.push(server);
      server = await start();
      return { done: "the server (SQLite: one process) killed with SIGKILL and started again on its port" };
    },
    async loseDatabase() {
      // No connection to lose: another process holds the write lock past the server's busy timeout (5 s).
      await holdSqliteWriteLock(join(dataDir, "berth.sqlite"), 7_000);
      return { done: "SQLite has no connection to terminate: another process held its write lock for 7 s instead" };
    },
    async restartRedis() {
      return { skipped: "the SQLite backend uses no Redis" };
    },
    processesAlive: async () => server.alive(),
    integrity: () => sqliteIntegrity(join(dataDir, "berth.sqlite")),
    outputs: () => [...restarted, server].map((p, i) => tail(p, `server #${i + 1}`)).join("\n"),
    async close() {
      await server.stop();
      if (typeof disk !== "string") await disk.unmount();
    },
  };
}

/** A tablespace on a small tmpfs owned by PostgreSQL's user, the test database inside it. */
async function createDatabaseOnSmallDisk(
  adminUrl: string,
  database: string,
): Promise<{ disk: SizeLimitedDir | string; drop(): Promise<void> }> {
  const tablespace = `${database}_ts`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  let disk: SizeLimitedDir | string;
  let mounted: SizeLimitedDir | undefined;
  try {
    mounted = await SizeLimitedDir.mount(48, await userIds("postgres"));
    await admin.query(`CREATE TABLESPACE ${tablespace} LOCATION '${mounted.path}'`);
    await admin.query(`CREATE DATABASE ${database} TABLESPACE ${tablespace}`);
    disk = mounted;
  } catch (error) {
    await admin.query(`DROP TABLESPACE IF EXISTS ${tablespace}`).catch(() => {});
    await mounted?.unmount();
    disk = `no tablespace on a size-limited disk (needs root, a superuser and PostgreSQL on this host): ${(error as Error).message}`;
  } finally {
    await admin.end();
  }
  return {
    disk,
    async drop() {
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await cleanup.query(`DROP TABLESPACE IF EXISTS ${tablespace}`);
      } finally {
        await cleanup.end();
      }
      if (typeof disk !== "string") await disk.unmount();
    },
  };
}

async function postgresTopology(): Promise<ChaosTopology> {
  const adminUrl = process.env.DATABASE_URL!;
  const redis = await PrivateRedis.start();
  const dataDir = newDataDir("berth-chaos-");
  const database = testDatabaseName(dataDir);
  const storage = await createDatabaseOnSmallDisk(adminUrl, database);
  const env = { REDIS_URL: redis.url };
  const startWorker = () => startBerth({ dataDir, role: "worker", env: { ...env, BERTH_WORKERS: "4" } });
  // Without Redis, on a database of their own: their LISTEN connection must come back after an outage too.
  const notifyDir = newDataDir("berth-chaos-");
  const noRedis = { REDIS_URL: undefined } as unknown as Record<string, string>;
  const [api, notifyApi, notifyWorker, ...workers] = await Promise.all([
    startBerth({ dataDir, role: "api", env }),
    startBerth({ dataDir: notifyDir, role: "api", env: noRedis }),
    startBerth({ dataDir: notifyDir, role: "worker", env: noRedis }),
    startWorker(),
    startWorker(),
  ]);
  const killed: BerthProcess[] = [];
  // The replacement of a killed worker starts meanwhile (the other worker carries the load, and its runs, alone),
  // again and again as a supervisor would: a worker that cannot reach the database or Redis as it starts exits.
  let replacing: Promise<void> = Promise.resolve();
  const replace = async () => {
    for (let tries = 1; ; tries++) {
      try {
        return void workers.push(await startWorker());
      } catch (error) {
        if (tries >= 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  };
  return {
    url: api.url,
    apis: [api.url, notifyApi.url],
    disk: storage.disk,
    async killWorker() {
      await replacing;
      const victim = workers.shift()!;
      await victim.kill();
      killed.push(victim);
      replacing = replace();
      return { done: "one of two worker processes killed with SIGKILL (a replacement starting meanwhile)" };
    },
    async loseDatabase() {
      const terminated = await terminateConnections(adminUrl, database);
      const notifyTerminated = await terminateConnections(adminUrl, testDatabaseName(notifyDir));
      return {
        done: `pg_terminate_backend of the servers' ${terminated} connections (and ${notifyTerminated} of the LISTEN/NOTIFY pair)`,
      };
    },
    async restartRedis() {
      await redis.restart(1_000);
      return { done: "the private redis-server killed with SIGKILL, started again after 1 s" };
    },
    async processesAlive() {
      await replacing;
      return workers.length === 2 && [api, notifyApi, notifyWorker, ...workers].every((p) => p.alive());
    },
    integrity: () => undefined,
    outputs: () =>
      [
        tail(api, "api"),
        ...[...killed, ...workers].map((p, i) => tail(p, `worker #${i + 1}`)),
        tail(notifyApi, "api (LISTEN/NOTIFY)"),
        tail(notifyWorker, "worker (LISTEN/NOTIFY)"),
      ].join("\n"),
    async close() {
      await replacing.catch(() => {});
      await Promise.all([api, notifyApi, notifyWorker, ...workers].map((p) => p.stop()));
      await redis.down();
      await storage.drop();
    },
  };
}

export function chaosTopology(): Promise<ChaosTopology> {
  return TEST_BACKEND === "postgres" ? postgresTopology() : sqliteTopology();
}
