import { createHash } from "node:crypto";
import pg from "pg";

/** Which backend the black-box suite runs against: set by scripts/run-tests.mjs. */
export const TEST_BACKEND = process.env.BERTH_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";

/** Prefix of the databases the suite creates (dropped by scripts/run-tests.mjs afterwards). */
export const TEST_DATABASE_PREFIX = "berth_t_";

/** One creation per database, shared by processes started together on the same data directory. */
const created = new Map<string, Promise<void>>();

async function createDatabase(adminUrl: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
}

/** The PostgreSQL database the servers of a data directory use. */
export function testDatabaseName(dataDir: string): string {
  return TEST_DATABASE_PREFIX + createHash("sha1").update(dataDir).digest("hex").slice(0, 16);
}

/**
 * The environment that points a server at the backend under test. With
 * PostgreSQL, every data directory maps to its own fresh database (so a restart
 * on the same data directory finds its data) and Redis key prefix.
 */
export async function backendEnv(dataDir: string): Promise<Record<string, string | undefined>> {
  if (TEST_BACKEND === "sqlite") return { DATABASE_URL: undefined, REDIS_URL: undefined };
  const adminUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!adminUrl || !redisUrl) throw new Error("BERTH_TEST_BACKEND=postgres needs DATABASE_URL and REDIS_URL");
  const database = testDatabaseName(dataDir);
  if (!created.has(database)) created.set(database, createDatabase(adminUrl, database));
  await created.get(database);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return {
    DATABASE_URL: url.toString(),
    REDIS_URL: redisUrl,
    BERTH_REDIS_PREFIX: database,
    // Leases lapse quickly so crash-recovery tests do not wait 30 s for another worker's runs.
    BERTH_LEASE_SECONDS: "3",
  };
}
