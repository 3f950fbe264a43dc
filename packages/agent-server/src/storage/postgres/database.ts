import { openPostgresDatabase as openWithMigrations } from "@berth/service-kit";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { renumberings } from "../shared/migration-numbers.js";

export { isUniqueViolation, sqlState, withTransaction, type Queryable } from "@berth/service-kit";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");
const MIGRATIONS_TABLE = "schema_migrations";

/** Opens a pool of at most `poolSize` connections and applies the agent server's pending migrations. */
export async function openPostgresDatabase(url: string, poolSize = 10): Promise<pg.Pool> {
  await renumberRecordedMigrations(url);
  return openWithMigrations(url, { migrationsDir: MIGRATIONS_DIR, migrationsTable: MIGRATIONS_TABLE, poolSize });
}

/**
 * Records the migrations of a database migrated before the files were renumbered under their numbers now
 * (migration-numbers.ts), so the runner neither applies one again nor skips one. Under the runner's advisory lock
 * (the same key), so processes starting together renumber once.
 */
async function renumberRecordedMigrations(url: string): Promise<void> {
  const { default: driver } = await import("pg");
  const client = new driver.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1 || current_schema()))", [`berth.${MIGRATIONS_TABLE}:`]);
    const { rows: exists } = await client.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [
      MIGRATIONS_TABLE,
    ]);
    if (exists[0]?.found) {
      const { rows } = await client.query<{ version: number; name: string }>(`SELECT version, name FROM ${MIGRATIONS_TABLE}`);
      const files = readdirSync(MIGRATIONS_DIR).filter((name) => name.endsWith(".sql"));
      for (const { from, to, name } of renumberings(rows, files)) {
        await client.query(`UPDATE ${MIGRATIONS_TABLE} SET version = $1, name = $2 WHERE version = $3`, [to, name, from]);
      }
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}
