// The databases the storage contract runs against: SQLite always, PostgreSQL
// when DATABASE_URL is set. Every test gets a database of its own.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach } from "node:test";
import { applyPostgresMigrations, openSqliteDatabase } from "@berth/service-kit";
import pg from "pg";
import { createPostgresStorage } from "../../../src/storage/postgres/index.js";
import { createSqliteStorage } from "../../../src/storage/sqlite/index.js";
import type { ControlPlaneStorage } from "../../../src/storage/types.js";
import { DATABASE_URL, freshSchema } from "./postgres-schema.js";

const STORAGE = join(dirname(fileURLToPath(import.meta.url)), "../../../src/storage");
const FIRST_MIGRATION = "001_control_plane.sql";

/** A new directory holding only the first migration of `backend` (sqlite or postgres), as the first release shipped it. */
function firstMigrationOnly(backend: "sqlite" | "postgres"): string {
  const dir = mkdtempSync(join(tmpdir(), "berth-cp-migrations-"));
  copyFileSync(join(STORAGE, backend, "migrations", FIRST_MIGRATION), join(dir, FIRST_MIGRATION));
  return dir;
}

/** A database: each `open` is a storage over it, as each process sharing it has its own. */
interface TestDatabase {
  open(): Promise<ControlPlaneStorage>;
  drop(): Promise<void>;
}

export interface Backend {
  name: "SQLite" | "PostgreSQL";
  /** A new empty database. */
  create(): Promise<TestDatabase>;
  /** A new database made by the first migration only, then `statements` run on it: what an early release left. */
  createAtFirstMigration(statements: string[]): Promise<TestDatabase>;
}

function sqliteDatabase(dir: string): TestDatabase {
  return {
    open: async () => createSqliteStorage(dir),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

const sqlite: Backend = {
  name: "SQLite",
  async create() {
    return sqliteDatabase(mkdtempSync(join(tmpdir(), "berth-cp-storage-")));
  },
  async createAtFirstMigration(statements) {
    const dir = mkdtempSync(join(tmpdir(), "berth-cp-storage-"));
    const migrations = firstMigrationOnly("sqlite");
    try {
      // The file name createSqliteStorage opens in the data directory.
      const db = openSqliteDatabase(join(dir, "control-plane.sqlite"), { migrationsDir: migrations });
      for (const statement of statements) db.exec(statement);
      db.close();
    } finally {
      rmSync(migrations, { recursive: true, force: true });
    }
    return sqliteDatabase(dir);
  },
};

const postgres: Backend = {
  name: "PostgreSQL",
  async create() {
    const schema = await freshSchema();
    return { open: () => createPostgresStorage(schema.url, { poolSize: 6 }), drop: schema.drop };
  },
  async createAtFirstMigration(statements) {
    const schema = await freshSchema();
    const migrations = firstMigrationOnly("postgres");
    const pool = new pg.Pool({ connectionString: schema.url, max: 1 });
    try {
      await applyPostgresMigrations(pool, migrations, "control_plane_migrations");
      for (const statement of statements) await pool.query(statement);
    } finally {
      await pool.end();
      rmSync(migrations, { recursive: true, force: true });
    }
    return { open: () => createPostgresStorage(schema.url, { poolSize: 6 }), drop: schema.drop };
  },
};

export const BACKENDS: Backend[] = DATABASE_URL ? [sqlite, postgres] : [sqlite];

/** What a test of the suite gets: two storages over its own database, as two control-plane processes sharing it. */
export interface TestStorages {
  readonly a: ControlPlaneStorage;
  readonly b: ControlPlaneStorage;
}

/** Gives every test of the calling suite a fresh database and two storages over it, closed and dropped after it. */
export function databasePerTest(backend: Backend): TestStorages {
  let database: TestDatabase | undefined;
  let storages: ControlPlaneStorage[] = [];
  beforeEach(async () => {
    database = await backend.create();
    storages = [await database.open(), await database.open()];
  });
  afterEach(async () => {
    await Promise.all(storages.map((storage) => storage.close()));
    storages = [];
    await database?.drop();
    database = undefined;
  });
  return {
    get a() {
      return storages[0];
    },
    get b() {
      return storages[1];
    },
  };
}
