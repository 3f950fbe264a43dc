import Database from "better-sqlite3";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { jsonContains } from "../json-contains.js";

export type SqliteDatabase = Database.Database;

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/**
 * How commits reach the disk. In WAL mode both survive a killed process
 * (kill -9): a committed transaction is in the WAL file. `full` also fsyncs
 * every commit, so it survives power loss and OS crashes too, at ~0.5 ms per
 * commit; `normal` syncs at checkpoints only.
 */
export type SqliteSynchronous = "normal" | "full";

/** Opens (creating if needed) the SQLite database file in WAL mode and applies pending migrations. */
export function openSqliteDatabase(file: string, synchronous: SqliteSynchronous = "full"): SqliteDatabase {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const db = cachePreparedStatements(new Database(file));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  db.function("json_contains", { deterministic: true }, (doc: unknown, filter: unknown) =>
    jsonContains(parseJson(doc), parseJson(filter)) ? 1 : 0,
  );
  applyMigrations(db);
  return db;
}

/**
 * Makes `db.prepare` return one statement per SQL text: preparing costs more
 * than running most of Berth's queries. Safe because statements are only ever
 * run to completion synchronously (never held open across an await).
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

function parseJson(text: unknown): unknown {
  return typeof text === "string" ? JSON.parse(text) : text;
}

/** Applies every `NNN_name.sql` file not yet recorded, each in its own transaction. */
export function applyMigrations(db: SqliteDatabase): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
  const applied = new Set(
    db.prepare("SELECT version FROM schema_migrations").all().map((row) => (row as { version: number }).version),
  );
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d+_.+\.sql$/.test(name))
    .sort();
  for (const name of files) {
    const version = Number.parseInt(name, 10);
    if (applied.has(version)) continue;
    const sql = readFileSync(join(MIGRATIONS_DIR, name), "utf8");
    db.transaction(() => {
      db.exec(sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        version,
        name,
        new Date().toISOString(),
      );
    })();
  }
}
