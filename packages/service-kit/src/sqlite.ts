import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { type AppliedMigration, migrationFiles, refuseUnknownMigrations } from "./migrations.js";
import { guardWrites, type SqliteWriteLock } from "./sqlite-write-lock.js";
import { BERTH_VERSION } from "./version.js";

export type SqliteDatabase = Database.Database;

/**
 * How commits reach the disk. In WAL mode both survive a killed process
 * (kill -9): a committed transaction is in the WAL file. `full` also fsyncs
 * every commit, so it survives power loss and OS crashes too, at ~0.5 ms per
 * commit; `normal` syncs at checkpoints only.
 */
export type SqliteSynchronous = "normal" | "full";

export interface SqliteOpenOptions {
  /** Directory of the `NNN_name.sql` migration files. */
  migrationsDir: string;
  synchronous?: SqliteSynchronous;
  /** Shared with the other threads of this process that write the file (sqlite-write-lock.ts). */
  writeLock?: SqliteWriteLock;
  /** Runs before the migrations, e.g. to register SQL functions they use. */
  configure?: (db: SqliteDatabase) => void;
}

/** Opens (creating if needed) the SQLite database file in WAL mode and applies pending migrations. */
export function openSqliteDatabase(file: string, options: SqliteOpenOptions): SqliteDatabase {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const db = cachePreparedStatements(new Database(file));
  if (options.writeLock) guardWrites(db, options.writeLock);
  // First: another process may be opening or writing the same file (switching a new file to WAL takes a lock too).
  db.pragma("busy_timeout = 5000");
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${(options.synchronous ?? "full") === "full" ? "FULL" : "NORMAL"}`);
  db.pragma("foreign_keys = ON");
  options.configure?.(db);
  applySqliteMigrations(db, options.migrationsDir);
  return db;
}

/**
 * Makes `db.prepare` return one statement per SQL text: preparing costs more
 * than running most queries. Safe because statements are only ever run to
 * completion synchronously (never held open across an await).
 */
function cachePreparedStatements(db: SqliteDatabase): SqliteDatabase {
  const prepare = db.prepare.bind(db);
  const statements = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = prepare(sql)));
    return statement;
  }) as SqliteDatabase["prepare"];
  return db;
}

/**
 * Applies every migration file not yet recorded, in one transaction that
 * takes the write lock first: processes starting together on one file wait
 * for each other, and each reads which migrations are applied only once it
 * holds the lock, so none is applied twice. A database that records a
 * migration these files do not have (a newer Berth wrote it) is refused
 * before anything is written.
 */
export function applySqliteMigrations(db: SqliteDatabase, migrationsDir: string): void {
  const migrations = migrationFiles(migrationsDir);
  db.transaction(() => {
    db.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL, berth_version TEXT)",
    );
    const columns = new Set((db.pragma("table_info(schema_migrations)") as { name: string }[]).map((column) => column.name));
    const applied = db
      .prepare(
        `SELECT version, name, applied_at, ${columns.has("berth_version") ? "berth_version" : "NULL AS berth_version"} FROM schema_migrations`,
      )
      .all() as AppliedMigration[];
    refuseUnknownMigrations(applied, migrations, `The SQLite database ${db.name}`);
    // Tables made before Berth recorded its version per migration gain the column.
    if (!columns.has("berth_version")) db.exec("ALTER TABLE schema_migrations ADD COLUMN berth_version TEXT");
    const appliedVersions = new Set(applied.map((migration) => migration.version));
    for (const { version, name, sql } of migrations) {
      if (appliedVersions.has(version)) continue;
      db.exec(sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at, berth_version) VALUES (?, ?, ?, ?)").run(
        version,
        name,
        new Date().toISOString(),
        BERTH_VERSION,
      );
    }
  }).immediate();
}
