import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { backendEnv, TEST_BACKEND } from "@berth/test-support";

/**
 * Everything the control plane stored for a data directory, as text to search: the SQLite files (database and WAL), or
 * every row of every table of the PostgreSQL database the suite gives that data directory.
 */
export async function storedText(dataDir: string): Promise<string> {
  if (TEST_BACKEND === "sqlite") {
    const base = join(dataDir, "control-plane.sqlite");
    return [base, `${base}-wal`, `${base}-shm`]
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file).toString("latin1"))
      .join("\n");
  }
  const { DATABASE_URL } = await backendEnv(dataDir);
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const tables = await client.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    const parts: string[] = [];
    for (const { schema, name } of tables.rows) {
      const rows = await client.query(`SELECT row_to_json(t)::text AS row FROM "${schema}"."${name}" t`);
      parts.push(...rows.rows.map((r: { row: string }) => r.row));
    }
    return parts.join("\n");
  } finally {
    await client.end();
  }
}
