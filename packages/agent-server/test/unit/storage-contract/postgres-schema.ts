// Fresh PostgreSQL schemas for storage tests. Without DATABASE_URL the tests
// that use them are skipped, and say so loudly.
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { createPostgresStorage } from "../../src/storage/postgres/index.js";
import type { NewRun, Storage } from "../../src/storage/types.js";

export const DATABASE_URL = process.env.DATABASE_URL;

/** The `skip` option of a node:test suite that needs PostgreSQL, with the loud message when it is skipped. */
export function skipWithoutPostgres(what: string): string | false {
  if (DATABASE_URL) return false;
  console.warn(`\n*** SKIPPED: ${what} (DATABASE_URL is not set, e.g. postgres://postgres@127.0.0.1:5432/test). ***\n`);
  return "DATABASE_URL is not set";
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

/**
 * `count` storages over one fresh schema, each with its own pool, as separate
 * processes would have; `close` ends them and drops the schema.
 */
export async function sharedStorages(count: number): Promise<{ url: string; storages: Storage[]; close(): Promise<void> }> {
  const schema = await freshSchema();
  const storages: Storage[] = [];
  for (let i = 0; i < count; i++) storages.push(await createPostgresStorage(schema.url, { poolSize: 5 }));
  return {
    url: schema.url,
    storages,
    async close() {
      await Promise.all(storages.map((storage) => storage.close()));
      await schema.drop();
    },
  };
}

/** A run of `threadId` with the defaults the run service would give it. */
export function newRun(threadId: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    run_id: randomUUID(),
    thread_id: threadId,
    assistant_id: "assistant-1",
    graph_id: "graph-1",
    metadata: {},
    multitask_strategy: "enqueue",
    kwargs: {
      input: { messages: [] },
      command: null,
      config: {},
      context: {},
      stream_mode: ["values"],
      stream_subgraphs: false,
      stream_resumable: false,
      interrupt_before: null,
      interrupt_after: null,
      checkpoint: null,
      webhook: null,
      feedback_keys: null,
      on_disconnect: "continue",
      on_completion: "keep",
      temporary: false,
      durability: null,
    },
    available_at: Date.now(),
    create_thread: false,
    ...overrides,
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
