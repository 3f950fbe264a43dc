import { join } from "node:path";
import type { ServerSettings } from "./config/settings.js";
import type { Logger } from "./logger.js";
import type { RunBroker } from "./runs/broker.js";
import { InProcessBroker } from "./runs/in-process-broker.js";
import { RedisBroker } from "./runs/redis-broker.js";
import { createPostgresStorage } from "./storage/postgres/index.js";
import { createSqliteStorage } from "./storage/sqlite/index.js";
import type { Storage } from "./storage/types.js";

export interface Backends {
  storage: Storage;
  broker: RunBroker;
  /** Only this process uses the database (embedded SQLite). */
  exclusive: boolean;
  describe: string;
}

/**
 * SQLite under the data directory by default; PostgreSQL with DATABASE_URL.
 * Redis (REDIS_URL) carries live streams and signals across processes;
 * without it they stay in this process.
 */
export async function openBackends(settings: ServerSettings, dataDir: string, logger: Logger): Promise<Backends> {
  const storage = settings.databaseUrl
    ? await createPostgresStorage(settings.databaseUrl, { poolSize: settings.postgresPoolSize })
    : createSqliteStorage(dataDir, settings.sqliteSynchronous);
  try {
    const broker = settings.redisUrl ? await RedisBroker.connect(settings.redisUrl, settings.redisPrefix) : new InProcessBroker();
    if (settings.databaseUrl && !settings.redisUrl) {
      logger.warn("DATABASE_URL without REDIS_URL: runs stream and signal within this process only");
    }
    return {
      storage,
      broker,
      exclusive: !settings.databaseUrl,
      describe: `${settings.databaseUrl ? "postgres" : `sqlite (${join(dataDir, "berth.sqlite")})`}${settings.redisUrl ? " + redis" : ""}`,
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
