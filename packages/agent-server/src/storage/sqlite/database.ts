import { openSqliteDatabase as openWithMigrations, type SqliteDatabase, type SqliteSynchronous } from "@berth/service-kit";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { jsonContains } from "../json-contains.js";

export type { SqliteDatabase, SqliteSynchronous };

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/** Opens the agent server's SQLite file with its migrations and the `json_contains` SQL function. */
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
