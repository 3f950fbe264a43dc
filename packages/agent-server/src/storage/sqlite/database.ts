import { openSqliteDatabase as openWithMigrations, type SqliteDatabase, type SqliteSynchronous } from "@berth/service-kit";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { jsonContains } from "./json-contains.js";

export type { SqliteDatabase, SqliteSynchronous };

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/**
 * Opens the agent server's SQLite file with its migrations and the
 * `json_contains` SQL function. Other processes may share the file
 * (BERTH_SQLITE_SHARED), so every transaction that writes begins IMMEDIATE
 * (`db.transaction(fn).immediate()`): it takes the write lock up front and
 * waits for another writer (busy_timeout), where a deferred transaction that
 * read before writing would fail with SQLITE_BUSY.
 */
export function openSqliteDatabase(file: string, synchronous: SqliteSynchronous = "full"): SqliteDatabase {
  return openWithMigrations(file, {
    migrationsDir: MIGRATIONS_DIR,
    synchronous,
    configure: (db) =>
      db.function("json_contains", { deterministic: true }, (doc: unknown, filter: unknown) =>
        jsonContains(parseJson(doc), parseJson(filter)) ? 1 : 0,
      ),
  });
}

function parseJson(text: unknown): unknown {
  return typeof text === "string" ? JSON.parse(text) : text;
}
