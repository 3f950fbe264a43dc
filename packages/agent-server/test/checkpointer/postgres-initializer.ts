import { randomBytes } from "node:crypto";
import type { CheckpointSaverTestInitializer } from "@langchain/langgraph-checkpoint-validation";
import pg from "pg";
import { PostgresCheckpointer } from "../../src/storage/postgres/checkpointer.js";
import { openPostgresDatabase } from "../../src/storage/postgres/database.js";

export const DATABASE_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

/** `url` with every connection's search_path set to `schema`, so unqualified table names resolve there. */
export function urlWithSchema(url: string, schema: string): string {
  const withSchema = new URL(url);
  withSchema.searchParams.set("options", `-c search_path=${schema}`);
  return withSchema.toString();
}

// Each checkpointer gets a fresh schema with the migrations applied, so instances share no state.
const schemas = new WeakMap<PostgresCheckpointer, { pool: pg.Pool; schema: string }>();

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const initializer: CheckpointSaverTestInitializer<PostgresCheckpointer> = {
  checkpointerName: "berth-postgres",
  async createCheckpointer() {
    const schema = `berth_checkpointer_${randomBytes(6).toString("hex")}`;
    await admin((client) => client.query(`CREATE SCHEMA ${schema}`));
    const pool = await openPostgresDatabase(urlWithSchema(DATABASE_URL, schema), 4);
    const checkpointer = new PostgresCheckpointer(pool);
    schemas.set(checkpointer, { pool, schema });
    return checkpointer;
  },
  async destroyCheckpointer(checkpointer) {
    const entry = schemas.get(checkpointer);
    if (!entry) return;
    await entry.pool.end();
    await admin((client) => client.query(`DROP SCHEMA ${entry.schema} CASCADE`));
  },
};

export default initializer;
