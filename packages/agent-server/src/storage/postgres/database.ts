import { openPostgresDatabase as openWithMigrations } from "@berth/service-kit";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";

export { isUniqueViolation, sqlState, withTransaction, type Queryable } from "@berth/service-kit";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/** Opens a pool of at most `poolSize` connections and applies the agent server's pending migrations. */
export function openPostgresDatabase(url: string, poolSize = 10): Promise<pg.Pool> {
  return openWithMigrations(url, { migrationsDir: MIGRATIONS_DIR, poolSize });
}
