import type pg from "pg";
import { type AppliedMigration, migrationFiles, refuseUnknownMigrations } from "./migrations.js";
import { BERTH_VERSION } from "./version.js";

/** What both a pool and a client inside a transaction offer: enough for one statement. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * Column parsers of this pool only (the global pg.types stay untouched, for
 * other users of pg in the process): bigint as a number (epoch ms, counts,
 * event seqs: all far below 2^53) and timestamptz as the ISO string SQLite
 * stores, e.g. 2024-05-01T12:00:00.123Z. Timestamps are written from the
 * application clock with millisecond precision, so nothing is lost.
 */
function poolTypes(types: typeof pg.types): pg.CustomTypesConfig {
  const parseTimestamptz = types.getTypeParser(types.builtins.TIMESTAMPTZ);
  return {
    getTypeParser(oid, format) {
      if (oid === types.builtins.INT8) return (text: string) => Number(text);
      if (oid === types.builtins.TIMESTAMPTZ) return (text: string) => (parseTimestamptz(text) as Date).toISOString();
      return types.getTypeParser(oid, format);
    },
  };
}

export interface PostgresOpenOptions {
  /** Directory of the `NNN_name.sql` migration files. */
  migrationsDir: string;
  /** Table recording the applied migrations; services sharing a database each keep their own. */
  migrationsTable?: string;
  /** Most connections the pool opens (default 10). */
  poolSize?: number;
}

/** Opens a pool and applies pending migrations. */
export async function openPostgresDatabase(url: string, options: PostgresOpenOptions): Promise<pg.Pool> {
  // Loaded on first use: a process on SQLite never pays for the driver.
  const { default: driver } = await import("pg");
  const pool = new driver.Pool({ connectionString: url, max: options.poolSize ?? 10, types: poolTypes(driver.types) });
  // An idle connection that drops (server restart, network) is reported here;
  // unhandled, that event would crash the process. The pool discards the
  // connection, and the next query opens a new one or fails to its caller.
  pool.on("error", () => {});
  // A checked-out client (a transaction between two statements, or mid-statement) whose
  // connection is terminated emits "error" with no listener of the pool's: that would crash the
  // process too. Its statement fails to its caller anyway, and the pool drops the client on release.
  pool.on("connect", (client) => client.on("error", () => {}));
  try {
    await applyPostgresMigrations(pool, options.migrationsDir, options.migrationsTable ?? "schema_migrations");
    return pool;
  } catch (err) {
    await pool.end();
    throw err;
  }
}

/** SQLSTATEs after which the whole transaction can simply run again. */
const RETRYABLE = new Set(["40P01" /* deadlock_detected */, "40001" /* serialization_failure */]);
const MAX_ATTEMPTS = 3;

/**
 * Runs `work` in one transaction on one connection (READ COMMITTED; the
 * repositories take the row locks they need). `work` must only touch the
 * database, since a deadlock victim is run again from the start.
 */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
      if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has(sqlState(err) ?? "")) throw err;
    } finally {
      client.release(broken); // a connection that cannot even roll back is destroyed, not reused
    }
  }
}

/** The SQLSTATE of a PostgreSQL error, if `err` is one. */
export function sqlState(err: unknown): string | undefined {
  return err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : undefined;
}

/** Whether `err` is a unique violation of the named constraint or index. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  return sqlState(err) === "23505" && (err as pg.DatabaseError).constraint === constraint;
}

/**
 * Applies every migration file not yet recorded in `table`, in one transaction
 * holding an advisory lock: processes starting together take turns, and the
 * later ones find the migrations applied. The lock is per schema and table, so
 * databases shared through separate schemas do not wait on each other. A
 * database that records a migration these files do not have (a newer Berth
 * wrote it) is refused before anything is written.
 */
export async function applyPostgresMigrations(pool: pg.Pool, migrationsDir: string, table: string): Promise<void> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`invalid migrations table name: ${table}`);
  const migrations = migrationFiles(migrationsDir);
  await withTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1 || current_schema()))", [`berth.${table}:`]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${table} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL, berth_version text)`,
    );
    const { rows: columns } = await client.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
         AND table_name = $1 AND column_name = 'berth_version') AS found`,
      [table],
    );
    const recordsVersions = columns[0]?.found === true;
    const { rows: applied } = await client.query<AppliedMigration>(
      `SELECT version, name, applied_at, ${recordsVersions ? "berth_version" : "NULL AS berth_version"} FROM ${table}`,
    );
    const { rows: where } = await client.query<{ database: string; schema: string }>(
      "SELECT current_database() AS database, current_schema() AS schema",
    );
    refuseUnknownMigrations(
      applied,
      migrations,
      `The PostgreSQL database ${where[0]?.database} (table ${where[0]?.schema}.${table})`,
    );
    // Tables made before Berth recorded its version per migration gain the column.
    if (!recordsVersions) await client.query(`ALTER TABLE ${table} ADD COLUMN berth_version text`);
    const appliedVersions = new Set(applied.map((migration) => migration.version));
    for (const { version, name, sql } of migrations) {
      if (appliedVersions.has(version)) continue;
      await client.query(sql);
      await client.query(`INSERT INTO ${table} (version, name, applied_at, berth_version) VALUES ($1, $2, $3, $4)`, [
        version,
        name,
        new Date().toISOString(),
        BERTH_VERSION,
      ]);
    }
  });
}
