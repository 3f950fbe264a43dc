import {
  openSqliteDatabase as openWithMigrations,
  type SqliteDatabase,
  type SqliteSynchronous,
  type SqliteWriteLock,
} from "@berth/service-kit";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { matchesConditions, type StoreCondition } from "../shared/memory-store-filter.js";
import { jsonContains } from "./json-contains.js";

export type { SqliteDatabase, SqliteSynchronous };

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/**
 * Opens the agent server's SQLite file with its migrations and the
 * `json_contains` and `store_value_matches` SQL functions. Other processes may share the file
 * (BERTH_SQLITE_SHARED), so every transaction that writes begins IMMEDIATE
 * (`db.transaction(fn).immediate()`): it takes the write lock up front and
 * waits for another writer (busy_timeout), where a deferred transaction that
 * read before writing would fail with SQLITE_BUSY.
 */
export function openSqliteDatabase(
  file: string,
  synchronous: SqliteSynchronous = "full",
  writeLock?: SqliteWriteLock,
): SqliteDatabase {
  return openWithMigrations(file, {
    migrationsDir: MIGRATIONS_DIR,
    synchronous,
    writeLock,
    configure: (db) => {
      db.function("json_contains", { deterministic: true }, (doc: unknown, filter: unknown) =>
        jsonContains(parseJson(doc), parseJson(filter)) ? 1 : 0,
      );
      db.function("store_value_matches", { deterministic: true }, storeValueMatches());
    },
  });
}

/**
 * `store_value_matches(value, conditions)`: whether a store item's value meets
 * a search filter's conditions (JSON of StoreCondition[]). A search passes the
 * same conditions for every row: they are parsed once, not per row.
 */
function storeValueMatches(): (value: unknown, conditions: unknown) => number {
  let lastText: unknown;
  let lastConditions: StoreCondition[] = [];
  return (value, conditions) => {
    if (conditions !== lastText) {
      lastConditions = parseJson(conditions) as StoreCondition[];
      lastText = conditions;
    }
    return matchesConditions(parseJson(value), lastConditions) ? 1 : 0;
  };
}

function parseJson(text: unknown): unknown {
  return typeof text === "string" ? JSON.parse(text) : text;
}
