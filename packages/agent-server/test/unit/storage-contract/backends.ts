// The databases the storage contract runs against: SQLite always, PostgreSQL
// when DATABASE_URL is set. Every test gets a database of its own.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "node:test";
import { createPostgresStorage } from "../../../src/storage/postgres/index.js";
import { createSqliteStorage } from "../../../src/storage/sqlite/index.js";
import type { Storage } from "../../../src/storage/types.js";
import { DATABASE_URL, freshSchema } from "./postgres-schema.js";

/** A new empty database: each `open` is a storage over it, as each process sharing it has its own. */
interface TestDatabase {
  /** PostgreSQL's connection URL (its search_path the test's schema). */
  url?: string;
  /** SQLite's database file. */
  file?: string;
  open(): Promise<Storage>;
  drop(): Promise<void>;
}

export interface Backend {
  name: "SQLite" | "PostgreSQL";
  create(): Promise<TestDatabase>;
}

const sqlite: Backend = {
  name: "SQLite",
  async create() {
    const dir = mkdtempSync(join(tmpdir(), "berth-storage-"));
    return {
      file: join(dir, "berth.sqlite"),
      // Shared, as processes sharing a data directory open it: with a lease thread (keepLeases).
      open: async () => createSqliteStorage(dir, "normal", { shared: true }),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

const postgres: Backend = {
  name: "PostgreSQL",
  async create() {
    const schema = await freshSchema();
    return { url: schema.url, open: () => createPostgresStorage(schema.url, { poolSize: 5 }), drop: schema.drop };
  },
};

export const BACKENDS: Backend[] = DATABASE_URL ? [sqlite, postgres] : [sqlite];

/** What a test of the suite gets: a storage over its own database, and more over the same one. */
export interface TestStorage {
  readonly storage: Storage;
  /** The database's URL (PostgreSQL only). */
  readonly url: string | undefined;
  /** The database's file (SQLite only). */
  readonly file: string | undefined;
  /** Another storage over the test's database, as another process would have. */
  open(): Promise<Storage>;
}

/** Gives every test of the calling suite a fresh database, closed and dropped after it. */
export function databasePerTest(backend: Backend): TestStorage {
  let database: TestDatabase | undefined;
  const storages: Storage[] = [];
  beforeEach(async () => {
    database = await backend.create();
    storages.push(await database.open());
  });
  afterEach(async () => {
    await Promise.all(storages.splice(0).map((storage) => storage.close()));
    await database?.drop();
    database = undefined;
  });
  return {
    get storage() {
      return storages[0];
    },
    get url() {
      return database?.url;
    },
    get file() {
      return database?.file;
    },
    async open() {
      if (!database) throw new Error("open() is for tests: the database exists from beforeEach to afterEach");
      const storage = await database.open();
      storages.push(storage);
      return storage;
    },
  };
}
