// Thread maintenance through the API: prune, checkpoint metadata patches, storage sizes in /info. Rows are counted in the server's
// own database (opened read-only), so nothing a thread owns is left behind.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { type BerthProcess, request, startBerth, TEST_BACKEND, testDatabaseName } from "@berth/test-support";

/** Every table keyed by thread_id (migrations), and run_events through runs. */
const COUNTS: [string, string][] = [
  ["threads", "SELECT count(*) AS n FROM threads WHERE thread_id = $1"],
  ["checkpoints", "SELECT count(*) AS n FROM checkpoints WHERE thread_id = $1"],
  ["checkpoint_writes", "SELECT count(*) AS n FROM checkpoint_writes WHERE thread_id = $1"],
  ["checkpoint_blobs", "SELECT count(*) AS n FROM checkpoint_blobs WHERE thread_id = $1"],
  ["runs", "SELECT count(*) AS n FROM runs WHERE thread_id = $1"],
  ["run_events", "SELECT count(*) AS n FROM run_events WHERE run_id IN (SELECT run_id FROM runs WHERE thread_id = $1)"],
];

async function rowCounts(berth: BerthProcess, threadId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  if (TEST_BACKEND === "sqlite") {
    const db = new Database(join(berth.dataDir, "berth.sqlite"), { readonly: true });
    try {
      for (const [table, sql] of COUNTS) counts[table] = (db.prepare(sql.replace("$1", "?")).get(threadId) as { n: number }).n;
    } finally {
      db.close();
    }
    return counts;
  }
  const url = new URL(process.env.DATABASE_URL ?? "");
  url.pathname = `/${testDatabaseName(berth.dataDir)}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query("SET default_transaction_read_only = on");
    for (const [table, sql] of COUNTS) counts[table] = Number((await client.query(sql, [threadId])).rows[0].n);
  } finally {
    await client.end();
  }
  return counts;
}

const EMPTY = { threads: 0, checkpoints: 0, checkpoint_writes: 0, checkpoint_blobs: 0, runs: 0, run_events: 0 };

describe("thread maintenance", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  /** A thread with two finished runs (checkpoints, writes, blobs, event logs). */
  async function threadWithRuns(): Promise<string> {
    const { thread_id } = await berth.client.threads.create();
    for (const content of ["hi", "again"]) {
      await berth.client.runs.wait(thread_id, "agent", { input: { messages: [{ type: "human", content }] } });
    }
    return thread_id;
  }

  it("prune delete leaves no rows of the threads behind, and skips unknown ids", async () => {
    const [first, second, other] = await Promise.all([threadWithRuns(), threadWithRuns(), threadWithRuns()]);
    const before = await rowCounts(berth, first);
    for (const [table, n] of Object.entries(before)) assert.ok(n > 0, `${table} has rows of the thread`);
    const otherBefore = await rowCounts(berth, other);

    const result = await berth.client.threads.prune([first, second, randomUUID()], { strategy: "delete" });
    assert.deepEqual(result, { pruned_count: 2 });
    assert.deepEqual(await rowCounts(berth, first), EMPTY);
    assert.deepEqual(await rowCounts(berth, second), EMPTY);
    assert.deepEqual(await rowCounts(berth, other), otherBefore);
    assert.equal((await request(berth.url, "GET", `/threads/${first}`)).status, 404);
  });

  it("prune keep_latest keeps the state and one checkpoint, and drops older checkpoints and their writes", async () => {
    const threadId = await threadWithRuns();
    const state = await berth.client.threads.getState(threadId);
    const before = await rowCounts(berth, threadId);
    assert.ok(before.checkpoints > 1);

    // The SDK's default strategy is delete; keep_latest is asked for.
    assert.deepEqual(await berth.client.threads.prune([threadId], { strategy: "keep_latest" }), { pruned_count: 1 });
    const after = await rowCounts(berth, threadId);
    assert.equal(after.checkpoints, 1);
    assert.ok(after.checkpoint_writes < before.checkpoint_writes);
    assert.ok(after.checkpoint_blobs < before.checkpoint_blobs);
    assert.deepEqual([after.threads, after.runs, after.run_events], [1, before.runs, before.run_events]);

    const pruned = await berth.client.threads.getState(threadId);
    assert.deepEqual(pruned.values, state.values);
    assert.equal(pruned.checkpoint.checkpoint_id, state.checkpoint.checkpoint_id);
    assert.equal((await berth.client.threads.getHistory(threadId, { limit: 10 })).length, 1);
    // The thread takes runs from the kept checkpoint.
    const values = await berth.client.runs.wait(threadId, "agent", {
      input: { messages: [{ type: "human", content: "more" }] },
    });
    assert.equal((values as { messages: unknown[] }).messages.length, 6);
  });

  it("prune answers 422 for a bad body", async () => {
    for (const body of [{}, { thread_ids: ["not-a-uuid"] }, { thread_ids: [], strategy: "archive" }]) {
      assert.equal((await request(berth.url, "POST", "/threads/prune", body)).status, 422, JSON.stringify(body));
    }
    assert.deepEqual((await request(berth.url, "POST", "/threads/prune", { thread_ids: [] })).body, { pruned_count: 0 });
  });

  it("patchState merges metadata into the latest checkpoint's, keeping its values and history", async () => {
    const threadId = await threadWithRuns();
    const state = await berth.client.threads.getState(threadId);
    const historyLength = (await berth.client.threads.getHistory(threadId, { limit: 100 })).length;

    await berth.client.threads.patchState(threadId, { reviewed: true, source: "patched" });
    const patched = await berth.client.threads.getState(threadId);
    assert.equal(patched.checkpoint.checkpoint_id, state.checkpoint.checkpoint_id);
    assert.deepEqual(patched.values, state.values);
    assert.equal(patched.parent_checkpoint?.checkpoint_id, state.parent_checkpoint?.checkpoint_id);
    assert.deepEqual(patched.metadata, { ...state.metadata, reviewed: true, source: "patched" });
    assert.equal((await berth.client.threads.getHistory(threadId, { limit: 100 })).length, historyLength);
    const found = await berth.client.threads.getHistory(threadId, { limit: 100, metadata: { reviewed: true } });
    assert.deepEqual(
      found.map((s) => s.checkpoint.checkpoint_id),
      [state.checkpoint.checkpoint_id],
    );

    // A config names the thread; a checkpoint id in the body names an older checkpoint.
    await berth.client.threads.patchState({ configurable: { thread_id: threadId } }, { again: 1 });
    assert.equal((await berth.client.threads.getState(threadId)).metadata?.again, 1);
    const parentId = state.parent_checkpoint?.checkpoint_id ?? "";
    const older = await request(berth.url, "PATCH", `/threads/${threadId}/state`, {
      metadata: { older: true },
      checkpoint_id: parentId,
    });
    assert.equal(older.status, 204);
    const olderState = await berth.client.threads.getState(threadId, parentId);
    assert.equal(olderState.metadata?.older, true);
    assert.equal((await berth.client.threads.getState(threadId)).metadata?.older, undefined);
  });

  it("patchState answers 404 for an unknown thread or checkpoint and 422 for a bad body", async () => {
    const unknown = randomUUID();
    const missing = await request(berth.url, "PATCH", `/threads/${unknown}/state`, { metadata: {} });
    assert.deepEqual([missing.status, missing.body], [404, { detail: `Thread ${unknown} not found` }]);
    await assert.rejects(berth.client.threads.patchState(unknown, { a: 1 }), /404/);

    const { thread_id } = await berth.client.threads.create();
    assert.equal((await request(berth.url, "PATCH", `/threads/${thread_id}/state`, { metadata: {} })).status, 404);
    const threadId = await threadWithRuns();
    const wrong = await request(berth.url, "PATCH", `/threads/${threadId}/state`, { metadata: {}, checkpoint_id: "nope" });
    assert.deepEqual([wrong.status, wrong.body], [404, { detail: "Checkpoint nope not found" }]);
    for (const body of [{}, { metadata: [] }, { metadata: "x" }, { metadata: {}, checkpoint: "x" }]) {
      const bad = await request(berth.url, "PATCH", `/threads/${threadId}/state`, body);
      assert.equal(bad.status, 422, JSON.stringify(body));
    }
  });

  it("GET /info reports the storage's counts and bytes beside the official fields", async () => {
    const threadId = await threadWithRuns();
    await berth.client.store.putItem(["sizes"], "k", { text: "hello" });
    const counts = await rowCounts(berth, threadId);
    const info = (await request(berth.url, "GET", "/info")).body as Record<string, unknown> & {
      storage: Record<string, { count: number; bytes: number }> & { backend: string };
    };
    assert.equal(info.server, "berth");
    assert.equal((info.flags as Record<string, boolean>).assistants, true);
    const { storage } = info;
    assert.equal(storage.backend, TEST_BACKEND);
    for (const part of ["threads", "checkpoints", "store_items", "run_events"]) {
      assert.ok(storage[part].count >= 1, `${part} counted`);
      assert.ok(storage[part].bytes > 0, `${part} measured`);
    }
    assert.ok(storage.checkpoints.count >= counts.checkpoints);
    assert.ok(storage.run_events.count >= counts.run_events);
  });
});
