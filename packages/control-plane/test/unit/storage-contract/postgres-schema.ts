// Fresh PostgreSQL schemas for the storage contract. Without DATABASE_URL the
// tests that use them are skipped, and say so loudly.
import { randomBytes } from "node:crypto";
import pg from "pg";

export const DATABASE_URL = process.env.DATABASE_URL;

/** The `skip` option of a node:test test that needs PostgreSQL, with the loud message when it is skipped. */
export function skipWithoutPostgres(what: string): string | false {
  if (DATABASE_URL) return false;
  console.warn(`\n*** SKIPPED: ${what} (DATABASE_URL is not set, e.g. postgres://postgres@127.0.0.1:5432/postgres). ***\n`);
  return "DATABASE_URL is not set: PostgreSQL was not tested";
}

/** Runs one statement on its own connection (DATABASE_URL's unless `url` is given). */
export async function admin(sql: string, url = DATABASE_URL): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new empty schema; `url` points every connection at it. */
export async function freshSchema(): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `berth_cp_test_${randomBytes(6).toString("hex")}`;
  await admin(`CREATE SCHEMA ${schema}`);
  const url = new URL(DATABASE_URL ?? "");
  url.searchParams.set("options", `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      await admin(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}
