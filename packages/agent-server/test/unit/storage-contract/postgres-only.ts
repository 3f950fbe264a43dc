// What only PostgreSQL does or needs: migrations raced by several pools,
// row locks held by other transactions, JSON that JSONB refuses.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { type CheckpointMetadata, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import pg from "pg";
import { createPostgresStorage } from "../../../src/storage/postgres/index.js";
import { type Backend, databasePerTest } from "./backends.js";
import { newRun, newThread } from "./fixtures.js";
import { freshSchema } from "./postgres-schema.js";

const meta = { source: "loop", step: 0, parents: {} } as CheckpointMetadata;

const MIGRATIONS_DIR = fileURLToPath(new URL("../../../src/storage/postgres/migrations", import.meta.url));

/** PostgreSQL's migrations as a database records them. */
const ALL_MIGRATIONS = [
  { version: 1, name: "001_core.sql" },
  { version: 2, name: "002_runs.sql" },
  { version: 4, name: "004_run_leases.sql" },
  { version: 5, name: "005_store.sql" },
  { version: 6, name: "006_thread_ttl.sql" },
  { version: 7, name: "007_crons.sql" },
  { version: 8, name: "008_webhook_outbox.sql" },
  { version: 9, name: "009_run_functions.sql" },
  { version: 10, name: "010_pending_runs_index.sql" },
  { version: 11, name: "011_thread_event_seq.sql" },
  { version: 12, name: "012_insert_run_claimed.sql" },
  { version: 13, name: "013_insert_run_running.sql" },
  { version: 14, name: "014_finish_run_events.sql" },
  { version: 15, name: "015_thread_checkpointed.sql" },
];

/** How databases migrated before the numbers matched SQLite's recorded them. */
const OLD_NUMBERS: [number, string][] = [
  [1, "001_core.sql"],
  [2, "002_runs.sql"],
  [3, "003_run_leases.sql"],
  [4, "004_store.sql"],
  [5, "005_thread_ttl.sql"],
  [6, "006_crons.sql"],
  [7, "007_webhook_outbox.sql"],
  [8, "008_run_functions.sql"],
  [9, "009_pending_runs_index.sql"],
];

export function postgresOnlyContract(backend: Backend): void {
  describe("PostgreSQL only", () => {
    const db = databasePerTest(backend);

    it("applies migrations from several pools starting at once", async () => {
      const schema = await freshSchema();
      try {
        const storages = await Promise.all(Array.from({ length: 6 }, () => createPostgresStorage(schema.url, { poolSize: 2 })));
        assert.equal(storages.length, 6);
        // Usable from every pool, and each migration recorded once.
        assert.ok(await storages[5].threads.create({ thread_id: randomUUID(), metadata: {} }));
        const client = new pg.Client({ connectionString: schema.url });
        await client.connect();
        const { rows } = await client.query("SELECT version, name FROM schema_migrations ORDER BY version");
        await client.end();
        assert.deepEqual(rows, ALL_MIGRATIONS);
        await Promise.all(storages.map((storage) => storage.close()));
      } finally {
        await schema.drop();
      }
    });

    it("opens a database migrated under the old numbers: renumbered, the rest applied, nothing run twice", async () => {
      const schema = await freshSchema();
      const client = new pg.Client({ connectionString: schema.url });
      await client.connect();
      try {
        // As a server before the renumbering left it: 001 to 007 applied and recorded under their old numbers.
        await client.query(
          "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)",
        );
        for (const [version, file] of OLD_NUMBERS.slice(0, 7)) {
          const current = ALL_MIGRATIONS.find(({ name }) => name.slice(4) === file.slice(4));
          await client.query(readFileSync(join(MIGRATIONS_DIR, current!.name), "utf8"));
          await client.query("INSERT INTO schema_migrations VALUES ($1, $2, now())", [version, file]);
        }
        // Opened twice at once: one renumbers, then the runner applies what 008 and 009 were (now 009 and 010) once.
        const storages = await Promise.all([0, 1].map(() => createPostgresStorage(schema.url, { poolSize: 2 })));
        const { rows } = await client.query("SELECT version, name FROM schema_migrations ORDER BY version");
        assert.deepEqual(rows, ALL_MIGRATIONS);
        const threadId = await newThread(storages[1]);
        assert.equal((await storages[0].runs.create(newRun(threadId))).kind, "created");
        await Promise.all(storages.map((storage) => storage.close()));
      } finally {
        await client.end();
        await schema.drop();
      }
    });

    for (const synchronousCommit of ["events", "off"] as const) {
      it(`works the same with synchronous_commit choice ${synchronousCommit} (and keeps the URL's own options)`, async () => {
        const schema = await freshSchema(); // its URL already has options (search_path)
        const storage = await createPostgresStorage(schema.url, { poolSize: 2, synchronousCommit });
        try {
          const threadId = await newThread(storage);
          const created = await storage.runs.create(newRun(threadId));
          assert.equal(created.kind, "created");
          const run = await storage.runs.claim("w", 60_000);
          assert.ok(run);
          const lease = { owner: "w", attempt: run.attempt };
          const events = [0, 1].map((seq) => ({ seq, event: "values", data: `{"n":${seq}}` }));
          assert.equal(await storage.runs.appendEvents(run.run_id, events, lease), true);
          assert.equal(await storage.runs.appendEvents(run.run_id, [{ seq: 2, event: "end", data: "null" }]), true);
          assert.equal(await storage.runs.appendEvents(run.run_id, events, { owner: "other", attempt: 1 }), false);
          assert.deepEqual(await storage.runs.readEvents(run.run_id, -1), [...events, { seq: 2, event: "end", data: "null" }]);
          const end = { status: "success" as const, output: null, thread: { values: { n: 1 }, interrupts: {} } };
          assert.equal(await storage.runs.finish(run.run_id, end, lease), true);
          assert.equal((await storage.threads.get(threadId))?.status, "idle");
        } finally {
          await storage.close();
          await schema.drop();
        }
      });
    }

    it("claims a run whose thread another transaction holds for a moment, instead of leaving it behind", async () => {
      const threadId = await newThread(db.storage);
      const created = await db.storage.runs.create(newRun(threadId));
      assert.equal(created.kind, "created");
      const other = new pg.Client({ connectionString: db.url });
      await other.connect();
      try {
        await other.query("BEGIN");
        await other.query("SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE", [threadId]);
        // The claim meets the lock (or just misses it) and must wait it out rather than fail.
        const claiming = (await db.open()).runs.claim("w", 60_000);
        await other.query("COMMIT");
        assert.equal((await claiming)?.thread_id, threadId);
      } finally {
        await other.end();
      }
    });

    it("stores JSON that JSONB refuses: U+0000 dropped, lone surrogates replaced, escaped look-alikes kept", async () => {
      const threadId = randomUUID();
      const metadata = { "a\u0000b": "x\u0000y", lone: "\ud800!", pair: "\ud83d\ude00", literal: "\\u0000 \\ud800" };
      const thread = await db.storage.threads.create({ thread_id: threadId, metadata });
      assert.deepEqual(thread?.metadata, { ab: "xy", lone: "\ufffd!", pair: "\ud83d\ude00", literal: "\\u0000 \\ud800" });
      assert.deepEqual(await db.storage.threads.idsByMetadata({ "a\u0000b": "x\u0000y" }), [threadId]);
    });

    it("a checkpoint write PostgreSQL refuses fails alone, the writes sent with it land", async () => {
      const saver = await db.storage.checkpointer();
      const threadId = await newThread(db.storage);
      const checkpointId = uuid6(0);
      const at = { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId } };
      // Issued in one turn, they go out as one statement first; a text column refuses U+0000.
      const outcomes = await Promise.allSettled([
        saver.putWrites(at, [["x", 1]], "task-1"),
        saver.putWrites(at, [["x", 2]], "task\u0000bad"),
        saver.putWrites(at, [["x", 3]], "task-3"),
      ]);
      assert.deepEqual(
        outcomes.map((outcome) => outcome.status),
        ["fulfilled", "rejected", "fulfilled"],
      );
      const tuple = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
      assert.equal(tuple, undefined, "writes alone make no checkpoint");
      await saver.put(
        { configurable: { thread_id: threadId, checkpoint_ns: "" } },
        { ...emptyCheckpoint(), id: checkpointId },
        meta,
        {},
      );
      const written = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
      assert.deepEqual(written?.pendingWrites?.map(([task, , value]) => [task, value]).sort(), [
        ["task-1", 1],
        ["task-3", 3],
      ]);
    });
  });
}
