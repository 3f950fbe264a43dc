// Thread maintenance on each backend: prune (delete, keep_latest), checked
// through the repositories and by counting the rows each table keeps.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { Annotation, StateGraph } from "@langchain/langgraph";
import Database from "better-sqlite3";
import pg from "pg";
import type { Storage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest, type TestStorage } from "./backends.js";
import { createdRun, newThread, sleep } from "./fixtures.js";

const THREAD_TABLES = ["checkpoints", "checkpoint_writes", "checkpoint_blobs", "runs"] as const;

/** Rows of each table that belong to the thread (run_events through its runs). */
async function rowCounts(test: TestStorage, threadId: string): Promise<Record<string, number>> {
  const queries: [string, string][] = [
    ...THREAD_TABLES.map((table): [string, string] => [table, `SELECT count(*) AS n FROM ${table} WHERE thread_id = $1`]),
    ["run_events", "SELECT count(*) AS n FROM run_events WHERE run_id IN (SELECT run_id FROM runs WHERE thread_id = $1)"],
  ];
  const counts: Record<string, number> = {};
  if (test.file) {
    const db = new Database(test.file, { readonly: true });
    try {
      for (const [table, sql] of queries) counts[table] = (db.prepare(sql.replace("$1", "?")).get(threadId) as { n: number }).n;
    } finally {
      db.close();
    }
    return counts;
  }
  const client = new pg.Client({ connectionString: test.url });
  await client.connect();
  try {
    for (const [table, sql] of queries) counts[table] = Number((await client.query(sql, [threadId])).rows[0].n);
  } finally {
    await client.end();
  }
  return counts;
}

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  last: Annotation<string>(),
});

/** A two-node graph over the storage's checkpointer: each invoke writes several checkpoints, writes and blobs. */
async function graphOf(storage: Storage) {
  return new StateGraph(State)
    .addNode("a", (state) => ({ log: [`a${state.log.length}`], last: "a" }))
    .addNode("b", () => ({ log: ["b"], last: "b" }))
    .addEdge("__start__", "a")
    .addEdge("a", "b")
    .compile({ checkpointer: await storage.checkpointer() });
}

/** A thread with three invokes' checkpoints, a run and its events. */
async function busyHistory(storage: Storage): Promise<string> {
  const threadId = await newThread(storage);
  const graph = await graphOf(storage);
  const config = { configurable: { thread_id: threadId } };
  for (const word of ["x", "y", "z"]) await graph.invoke({ log: [word] }, config);
  const runId = await createdRun(storage, threadId);
  await storage.runs.appendEvents(runId, [{ seq: 0, event: "metadata", data: "{}" }]);
  return threadId;
}

export function threadsContract(backend: Backend): void {
  describe("threads.prune", () => {
    const test = databasePerTest(backend);

    it("delete removes the threads with every row they own, skipping unknown ids", async () => {
      const { storage } = test;
      const [gone, kept] = [await busyHistory(storage), await busyHistory(storage)];
      const before = await rowCounts(test, gone);
      for (const table of [...THREAD_TABLES, "run_events"]) assert.ok(before[table] > 0, `${table} has rows before`);

      assert.equal(await storage.threads.prune([gone, randomUUID(), gone], "delete"), 1);
      assert.equal(await storage.threads.get(gone), undefined);
      assert.deepEqual(await rowCounts(test, gone), {
        checkpoints: 0,
        checkpoint_writes: 0,
        checkpoint_blobs: 0,
        runs: 0,
        run_events: 0,
      });
      assert.deepEqual(await rowCounts(test, kept), before, "another thread keeps its rows");
      assert.equal(await storage.threads.prune([gone], "delete"), 0);
    });

    it("keep_latest keeps the latest checkpoint and its state, and drops older checkpoints, writes and blobs", async () => {
      const { storage } = test;
      const threadId = await busyHistory(storage);
      const graph = await graphOf(storage);
      const config = { configurable: { thread_id: threadId } };
      const state = await graph.getState(config);
      const before = await rowCounts(test, threadId);

      assert.equal(await storage.threads.prune([threadId, randomUUID()], "keep_latest"), 1);
      const after = await rowCounts(test, threadId);
      assert.equal(after.checkpoints, 1);
      assert.equal(after.checkpoint_writes, 0, "the latest checkpoint of a finished run has no pending writes");
      assert.ok(after.checkpoint_blobs > 0 && after.checkpoint_blobs < before.checkpoint_blobs);
      const latest = await (await storage.checkpointer()).getTuple(config);
      const named = Object.keys(latest?.checkpoint.channel_versions ?? {}).length;
      assert.equal(after.checkpoint_blobs, named, "one blob per channel version the kept checkpoint names");
      assert.deepEqual([after.runs, after.run_events], [before.runs, before.run_events], "runs stay");

      const pruned = await graph.getState(config);
      assert.deepEqual(pruned.values, state.values);
      assert.equal(pruned.config.configurable?.checkpoint_id, state.config.configurable?.checkpoint_id);
      assert.equal(pruned.parentConfig, undefined, "history is one checkpoint long");
      const history = [];
      for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
      assert.equal(history.length, 1);

      // The thread goes on from the kept checkpoint.
      await graph.invoke({ log: ["w"] }, config);
      assert.deepEqual((await graph.getState(config)).values.log, [...state.values.log, "w", "a10", "b"]);
      assert.equal(await storage.threads.prune([threadId], "keep_latest"), 1);
      assert.equal((await rowCounts(test, threadId)).checkpoints, 1);
    });

    it("keep_latest of a thread without checkpoints counts it and changes nothing", async () => {
      const { storage } = test;
      const threadId = await newThread(storage);
      assert.equal(await storage.threads.prune([threadId], "keep_latest"), 1);
      assert.ok(await storage.threads.get(threadId));
    });
  });

  describe("sizes", () => {
    const test = databasePerTest(backend);

    it("counts threads, checkpoints, store items and run events, and their bytes grow with them", async () => {
      const { storage } = test;
      const empty = await storage.sizes();
      assert.equal(empty.backend, backend.name === "SQLite" ? "sqlite" : "postgres");
      for (const part of ["threads", "checkpoints", "store_items", "run_events"] as const) {
        assert.equal(empty[part].count, 0, part);
      }
      const threadId = await busyHistory(storage);
      await storage.store.put({
        namespace: ["a"],
        key: "k",
        value: { v: randomBytes(6_000).toString("hex") },
        ttlMinutes: null,
        vectors: [],
      });
      const sizes = await storage.sizes();
      const rows = await rowCounts(test, threadId);
      assert.deepEqual(
        [sizes.threads.count, sizes.checkpoints.count, sizes.store_items.count, sizes.run_events.count],
        [1, rows.checkpoints, 1, rows.run_events],
      );
      for (const part of ["threads", "checkpoints", "store_items", "run_events"] as const) {
        assert.ok(sizes[part].bytes > 0 && Number.isSafeInteger(sizes[part].bytes), part);
      }
      assert.ok(sizes.store_items.bytes >= 5_000, "a large value counts (random: compression cannot hide it)");
    });
  });

  describe("thread ttl", () => {
    const test = databasePerTest(backend);
    const query = { sort_by: "created_at", sort_order: "asc", limit: 10, offset: 0 } as const;
    const ids = async (storage: Storage) => (await storage.threads.search(query)).items.map((t) => t.thread_id);

    it("hides expired threads from search and count, and the sweep deletes them with every row they own", async () => {
      const { storage } = test;
      const forever = await newThread(storage);
      const expiring = randomUUID();
      assert.ok(await storage.threads.create({ thread_id: expiring, metadata: { k: 1 }, ttl_minutes: 0.01 }));
      const graph = await graphOf(storage);
      await graph.invoke({ log: ["x"] }, { configurable: { thread_id: expiring } });
      await storage.runs.appendEvents(await createdRun(storage, expiring), [{ seq: 0, event: "metadata", data: "{}" }]);
      await storage.runs.finish((await storage.runs.claim("w", 60_000))?.run_id ?? "", {
        status: "success",
        output: null,
        thread: { values: null, interrupts: {}, status: "idle" },
      });
      assert.deepEqual((await ids(storage)).sort(), [forever, expiring].sort());
      assert.equal(await storage.threads.count({ metadata: { k: 1 } }), 1);

      await sleep(700);
      assert.deepEqual(await ids(storage), [forever]);
      assert.equal(await storage.threads.count({ metadata: { k: 1 } }), 0);
      assert.equal(await storage.threads.count({}), 1);
      assert.ok(await storage.threads.get(expiring), "get still finds it until swept");

      assert.equal(await storage.threads.sweepExpired(10), 1);
      assert.equal(await storage.threads.get(expiring), undefined);
      assert.deepEqual(await rowCounts(test, expiring), {
        checkpoints: 0,
        checkpoint_writes: 0,
        checkpoint_blobs: 0,
        runs: 0,
        run_events: 0,
      });
      assert.equal(await storage.threads.sweepExpired(10), 0);
      assert.ok(await storage.threads.get(forever));
    });

    it("sweeps in batches of at most `limit`, skips busy threads, and patch sets or clears the ttl", async () => {
      const { storage } = test;
      const threads = [];
      for (let i = 0; i < 5; i++) {
        const threadId = randomUUID();
        assert.ok(await storage.threads.create({ thread_id: threadId, metadata: {}, ttl_minutes: 0.01 }));
        threads.push(threadId);
      }
      const [busy, renewed, cleared] = threads;
      await createdRun(storage, busy); // a pending run makes it busy
      await storage.threads.patch(renewed, { n: 1 }, 60);
      await storage.threads.patch(cleared, {}, null);
      await sleep(700);
      assert.deepEqual(
        (await ids(storage)).sort(),
        [busy, renewed, cleared].sort().filter((id) => id !== busy),
      );
      assert.equal(await storage.threads.sweepExpired(1), 1);
      assert.equal(await storage.threads.sweepExpired(10), 1);
      assert.equal(await storage.threads.sweepExpired(10), 0, "the busy thread waits for its run");
      assert.ok(await storage.threads.get(busy));
      assert.equal((await storage.threads.get(renewed))?.metadata.n, 1);
      assert.ok(await storage.threads.get(cleared));
    });
  });

  // SQLite commits writes in groups, one transaction per turn of the event loop; a read that must see
  // a queued write commits the group first. PostgreSQL's writes are not queued.
  if (backend.name !== "SQLite") return;
  describe("group commit", () => {
    const test = databasePerTest(backend);

    it("a read of a run's event log sees that run's appends still queued, beside another run's", async () => {
      const { storage } = test;
      const runId = await createdRun(storage, await newThread(storage));
      const other = await createdRun(storage, await newThread(storage));
      const event = (seq: number) => ({ seq, event: "values", data: `{"n":${seq}}` });
      const appended = [storage.runs.appendEvents(other, [event(0)]), storage.runs.appendEvents(runId, [event(0), event(1)])];
      assert.deepEqual(
        (await storage.runs.readEvents(runId, 0)).map((stored) => stored.seq),
        [1],
      );
      appended.push(storage.runs.appendEvents(runId, [event(2)]));
      assert.equal(await storage.runs.lastEventSeq(runId), 2);
      assert.deepEqual(await Promise.all(appended), [true, true, true]);
      assert.equal(await storage.runs.lastEventSeq(other), 0);
    });
  });
}
