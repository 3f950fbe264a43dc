import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";

describe("threads", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  it("creates an idle thread, with the SDK's graph id in its metadata", async () => {
    const thread = await berth.client.threads.create({ graphId: "agent", metadata: { user: "ada" } });
    assert.equal(thread.status, "idle");
    assert.deepEqual(thread.metadata, { user: "ada", graph_id: "agent" });
    assert.deepEqual(thread.config, {});
    assert.deepEqual(await berth.client.threads.get(thread.thread_id), thread);
  });

  it("accepts an empty body", async () => {
    const response = await request(berth.url, "POST", "/threads", {});
    assert.equal(response.status, 200);
    assert.equal((response.body as { status: string }).status, "idle");
  });

  it("honours thread_id and if_exists", async () => {
    const threadId = crypto.randomUUID();
    const first = await berth.client.threads.create({ threadId, metadata: { n: 1 } });
    assert.equal(first.thread_id, threadId);
    const again = await berth.client.threads.create({ threadId, ifExists: "do_nothing", metadata: { n: 2 } });
    assert.deepEqual(again, first);
    const conflict = await request(berth.url, "POST", "/threads", { thread_id: threadId });
    assert.equal(conflict.status, 409);
    assert.deepEqual(conflict.body, { detail: "Thread already exists" });
  });

  it("applies supersteps through the graph at creation", async () => {
    const thread = await berth.client.threads.create({
      graphId: "agent",
      supersteps: [
        { updates: [{ values: { messages: [{ type: "human", content: "hi", id: "m1" }] }, asNode: "__input__" }] },
        { updates: [{ values: { messages: [{ type: "human", content: "hi", id: "m1" }] }, asNode: "__start__" }] },
        { updates: [{ values: { messages: [{ type: "ai", content: "hello", id: "m2" }] }, asNode: "respond" }] },
      ],
    });
    const values = thread.values as { messages: { type: string; content: string; id: string }[] };
    assert.deepEqual(
      values.messages.map((m) => [m.type, m.content, m.id]),
      [
        ["human", "hi", "m1"],
        ["ai", "hello", "m2"],
      ],
    );
    const history = await berth.client.threads.getHistory(thread.thread_id, { limit: 10 });
    assert.ok(history.length >= 3);
  });

  it("merges metadata on patch", async () => {
    const thread = await berth.client.threads.create({ metadata: { a: 1, b: { x: 1 } } });
    const patched = await berth.client.threads.update(thread.thread_id, { metadata: { b: { y: 2 }, c: null } });
    assert.deepEqual(patched.metadata, { a: 1, b: { y: 2 }, c: null });
    assert.ok(patched.updated_at >= thread.updated_at);
  });

  it("deletes a thread with its checkpoints", async () => {
    const thread = await berth.client.threads.create({
      graphId: "agent",
      supersteps: [{ updates: [{ values: { messages: [{ type: "human", content: "x" }] }, asNode: "respond" }] }],
    });
    await berth.client.threads.delete(thread.thread_id);
    const gone = await request(berth.url, "GET", `/threads/${thread.thread_id}`);
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, { detail: `Thread with ID ${thread.thread_id} not found` });
    // Re-creating the id starts from an empty history: the checkpoints went with the thread.
    await berth.client.threads.create({ threadId: thread.thread_id, graphId: "agent" });
    assert.deepEqual(await berth.client.threads.getHistory(thread.thread_id), []);
  });

  it("searches by ids, metadata, values and status, sorted and paged", async () => {
    const marker = crypto.randomUUID();
    const created = [];
    for (const n of [1, 2, 3]) {
      created.push(await berth.client.threads.create({ metadata: { marker, n } }));
    }
    const all = await berth.client.threads.search({ metadata: { marker } });
    assert.deepEqual(
      all.map((t) => t.metadata?.n),
      [3, 2, 1],
      "newest first by default",
    );
    const asc = await berth.client.threads.search({ metadata: { marker }, sortBy: "created_at", sortOrder: "asc" });
    assert.deepEqual(
      asc.map((t) => t.metadata?.n),
      [1, 2, 3],
    );
    const byId = await berth.client.threads.search({ metadata: { marker }, sortBy: "thread_id", sortOrder: "asc" });
    assert.deepEqual(
      byId.map((t) => t.thread_id),
      created.map((t) => t.thread_id).sort(),
    );
    const ids = await berth.client.threads.search({ ids: [created[0].thread_id, created[2].thread_id] });
    assert.deepEqual(ids.map((t) => t.metadata?.n).sort(), [1, 3]);
    const page = await request(berth.url, "POST", "/threads/search", { metadata: { marker }, limit: 2, offset: 1 });
    assert.deepEqual(
      (page.body as { metadata: { n: number } }[]).map((t) => t.metadata?.n),
      [2, 1],
    );
    assert.equal(page.headers.get("x-pagination-total"), "3");
    const idle = await berth.client.threads.search({ metadata: { marker }, status: "idle" });
    assert.equal(idle.length, 3);
    const busy = await berth.client.threads.search({ metadata: { marker }, status: "busy" });
    assert.equal(busy.length, 0);
    assert.equal(await berth.client.threads.count({ metadata: { marker } }), 3);
    assert.equal(await berth.client.threads.count({ metadata: { marker, n: 2 } }), 1);

    const withValues = await berth.client.threads.create({
      graphId: "plain_js",
      metadata: { marker },
      supersteps: [{ updates: [{ values: { text: "stored" }, asNode: "shout" }] }],
    });
    const byValues = await berth.client.threads.search({ values: { text: "stored" } });
    assert.deepEqual(
      byValues.map((t) => t.thread_id),
      [withValues.thread_id],
    );
    assert.equal(await berth.client.threads.count({ values: { text: "stored" } }), 1);
  });

  it("copies a thread with an identical, independent history", async () => {
    const source = await berth.client.threads.create({
      graphId: "plain_js",
      metadata: { origin: true },
      supersteps: [
        { updates: [{ values: { text: "one" }, asNode: "shout" }] },
        { updates: [{ values: { text: "two" }, asNode: "shout" }] },
      ],
    });
    const copy = await berth.client.threads.copy(source.thread_id);
    assert.notEqual(copy.thread_id, source.thread_id);
    assert.deepEqual(copy.metadata, source.metadata);
    assert.deepEqual(copy.values, { text: "two" });
    const sourceHistory = await berth.client.threads.getHistory(source.thread_id);
    const copyHistory = await berth.client.threads.getHistory(copy.thread_id);
    assert.deepEqual(
      copyHistory.map((s) => [s.checkpoint.checkpoint_id, s.values]),
      sourceHistory.map((s) => [s.checkpoint.checkpoint_id, s.values]),
    );
    assert.ok(copyHistory.every((s) => s.checkpoint.thread_id === copy.thread_id));

    await berth.client.threads.updateState(copy.thread_id, { values: { text: "only in copy" }, asNode: "shout" });
    assert.deepEqual((await berth.client.threads.getState(source.thread_id)).values, { text: "two" });
    assert.deepEqual((await berth.client.threads.getState(copy.thread_id)).values, { text: "only in copy" });
  });
});
