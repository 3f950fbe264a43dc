import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BERTH_VERSION } from "./version.js";

export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
}

/** The `NNN_name.sql` files of a directory, in order. */
export function migrationFiles(dir: string): MigrationFile[] {
  return readdirSync(dir)
    .filter((name) => /^\d+_.+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: Number.parseInt(name, 10), name, sql: readFileSync(join(dir, name), "utf8") }));
}

/** A row of a migrations table; `berth_version` is null for migrations applied before Berth recorded it. */
export interface AppliedMigration {
  version: number;
  name: string;
  applied_at: string;
  berth_version: string | null;
}

/**
 * A database that records a migration this Berth does not have: a newer
 * Berth wrote it. Nothing was changed (the check runs before any migration,
 * in the same transaction).
 */
export class DatabaseTooNewError extends Error {
  override readonly name = "DatabaseTooNewError";
}

/** Refuses a database written by a newer Berth, naming its migrations and versions and this Berth's. */
export function refuseUnknownMigrations(applied: AppliedMigration[], known: MigrationFile[], database: string): void {
  const knownVersions = new Set(known.map((migration) => migration.version));
  const unknown = applied.filter((migration) => !knownVersions.has(migration.version)).sort((a, b) => a.version - b.version);
  if (unknown.length === 0) return;
  const writers = [...new Set(unknown.map((migration) => migration.berth_version).filter((v): v is string => v !== null))];
  const newest = known.at(-1)?.name ?? "none";
  throw new DatabaseTooNewError(
    `${database} was written by a newer Berth${writers.length > 0 ? ` (${writers.join(", ")})` : ""}: it records ` +
      `migration${unknown.length > 1 ? "s" : ""} ${unknown.map((migration) => migration.name).join(", ")}, which ` +
      `Berth ${BERTH_VERSION} does not have (its newest is ${newest}). Nothing was changed. Run that Berth or a newer ` +
      "one on this database, or restore a backup taken before the upgrade (docs/operations.md).",
  );
}
