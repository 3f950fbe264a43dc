// Fresh PostgreSQL schemas for storage tests. Without DATABASE_URL the tests
// that use them are skipped, and say so loudly.
import { randomBytes } from "node:crypto";
import pg from "pg";

export const DATABASE_URL = process.env.DATABASE_URL;

/** The `skip` option of a node:test test that needs PostgreSQL, with the loud message when it is skipped. */
export function skipWithoutPostgres(what: string): string | false {
  if (DATABASE_URL) return false;
  console.warn(`\n*** SKIPPED: ${what} (DATABASE_URL is not set, e.g. postgres://postgres@127.0.0.1:5432/test). ***\n`);
  return "DATABASE_URL is not set: PostgreSQL was not tested";
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new empty schema; `url` points every connection at it. */
export async function freshSchema(): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `berth_test_${randomBytes(6).toString("hex")}`;
  await admin(`CREATE SCHEMA ${schema}`);
  const url = new URL(DATABASE_URL ?? "");
  url.searchParams.set("options", `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => admin(`DROP SCHEMA ${schema} CASCADE`) };
}
