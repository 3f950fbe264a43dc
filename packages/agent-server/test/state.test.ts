import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";

const STATE_KEYS = [
  "checkpoint",
  "checkpoint_id",
  "created_at",
  "metadata",
  "next",
  "parent_checkpoint",
  "parent_checkpoint_id",
  "tasks",
  "values",
].sort();

describe("thread state and history", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  /** A plain_js thread with three checkpoints: text "a", "b", "c". */
  async function threadWithHistory() {
    return berth.client.threads.create({
      graphId: "plain_js",
      supersteps: ["a", "b", "c"].map((text) => ({ updates: [{ values: { text }, asNode: "shout" }] })),
    });
  }

  it("a thread without a graph has an empty state and history", async () => {
    const thread = await berth.client.threads.create();
    const state = await request(berth.url, "GET", `/threads/${thread.thread_id}/state`);
    assert.equal(state.status, 200);
    assert.deepEqual(state.body, {
      values: {},
      next: [],
      tasks: [],
      metadata: {},
      created_at: null,
      checkpoint: null,
      parent_checkpoint: null,
      checkpoint_id: null,
      parent_checkpoint_id: null,
    });
    assert.deepEqual(await berth.client.threads.getHistory(thread.thread_id), []);
  });

  it("returns the current state in the spec's shape, with flat messages", async () => {
    const thread = await berth.client.threads.create({
      graphId: "agent",
      supersteps: [{ updates: [{ values: { messages: [{ type: "ai", content: "hey", id: "m1" }] }, asNode: "respond" }] }],
    });
    const state = await berth.client.threads.getState<{ messages: Record<string, unknown>[] }>(thread.thread_id);
    assert.deepEqual(Object.keys(state).sort(), STATE_KEYS);
    assert.deepEqual(state.values.messages, [
      {
        type: "ai",
        content: "hey",
        id: "m1",
        additional_kwargs: {},
        response_metadata: {},
        tool_calls: [],
        invalid_tool_calls: [],
      },
    ]);
    assert.equal(state.checkpoint.thread_id, thread.thread_id);
    assert.equal(state.checkpoint.checkpoint_ns, "");
    assert.equal((state as unknown as { checkpoint_id: string }).checkpoint_id, state.checkpoint.checkpoint_id);
    assert.equal(state.metadata?.source, "update");
    assert.equal(typeof state.metadata?.step, "number");
    assert.match(state.created_at ?? "", /^\d{4}-\d\d-\d\dT/);
  });

  it("reads the state at a checkpoint, by path and by checkpoint object", async () => {
    const thread = await threadWithHistory();
    const history = await berth.client.threads.getHistory<{ text: string }>(thread.thread_id);
    const older = history.find((s) => s.values.text === "a")!;
    const byPath = await berth.client.threads.getState<{ text: string }>(thread.thread_id, older.checkpoint.checkpoint_id!);
    assert.equal(byPath.values.text, "a");
    const byObject = await berth.client.threads.getState<{ text: string }>(thread.thread_id, older.checkpoint);
    assert.deepEqual(byObject, byPath);
    const unknown = await request(berth.url, "GET", `/threads/${thread.thread_id}/state/1ef00000-0000-6000-8000-000000000000`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { detail: "Checkpoint 1ef00000-0000-6000-8000-000000000000 not found" });
  });

  it("lists history newest first with limit, before and a metadata filter", async () => {
    const thread = await threadWithHistory();
    const history = await berth.client.threads.getHistory<{ text?: string }>(thread.thread_id, { limit: 10 });
    assert.deepEqual(
      history.slice(0, 3).map((s) => s.values.text),
      ["c", "b", "a"],
    );
    for (let i = 1; i < history.length; i++) {
      assert.equal(history[i - 1].parent_checkpoint?.checkpoint_id, history[i].checkpoint.checkpoint_id);
    }
    const limited = await berth.client.threads.getHistory(thread.thread_id, { limit: 2 });
    assert.equal(limited.length, 2);
    const beforeNewest = await berth.client.threads.getHistory<{ text?: string }>(thread.thread_id, {
      before: { configurable: { checkpoint_id: history[0].checkpoint.checkpoint_id } },
    });
    assert.deepEqual(
      beforeNewest.map((s) => s.checkpoint.checkpoint_id),
      history.slice(1).map((s) => s.checkpoint.checkpoint_id),
    );
    const step1 = await berth.client.threads.getHistory(thread.thread_id, { metadata: { step: history[1].metadata?.step } });
    assert.deepEqual(
      step1.map((s) => s.checkpoint.checkpoint_id),
      [history[1].checkpoint.checkpoint_id],
    );
    const viaGet = await request(berth.url, "GET", `/threads/${thread.thread_id}/history?limit=1`);
    assert.equal(viaGet.status, 200);
    assert.deepEqual(viaGet.body, [history[0]]);
  });

  it("updates state as a node and records it in the thread", async () => {
    const thread = await berth.client.threads.create({ graphId: "plain_js" });
    const result = await berth.client.threads.updateState(thread.thread_id, { values: { text: "set by hand" }, asNode: "shout" });
    assert.equal(result.configurable!.thread_id, thread.thread_id);
    const state = await berth.client.threads.getState<{ text: string }>(thread.thread_id);
    assert.equal(state.values.text, "set by hand");
    assert.equal(state.checkpoint.checkpoint_id, result.configurable!.checkpoint_id);
    const reread = await berth.client.threads.get(thread.thread_id);
    assert.deepEqual(reread.values, { text: "set by hand" });
  });

  it("a factory graph's state is read and updated with the config of the thread's assistant", async () => {
    const assistant = await berth.client.assistants.create({
      graphId: "factory",
      config: { configurable: { node_name: "chosen" } },
    });
    const thread = await berth.client.threads.create();
    await berth.client.runs.wait(thread.thread_id, assistant.assistant_id, { input: { count: 1 } });
    const updated = await berth.client.threads.updateState(thread.thread_id, { values: { count: 5 }, asNode: "chosen" });
    assert.equal(updated.configurable!.thread_id, thread.thread_id);
    const state = await berth.client.threads.getState<{ count: number }>(thread.thread_id);
    assert.equal(state.values.count, 7);
    assert.equal(state.metadata?.source, "update");
    const history = await berth.client.threads.getHistory(thread.thread_id);
    assert.ok(
      history.some((snapshot) => snapshot.next.includes("chosen")),
      "the run's step names the assistant's node",
    );
  });

  it("an update before a node leaves the thread waiting for it", async () => {
    const thread = await berth.client.threads.create({ graphId: "plain_js" });
    await berth.client.threads.updateState(thread.thread_id, { values: { text: "input" }, asNode: "__start__" });
    const state = await berth.client.threads.getState(thread.thread_id);
    assert.deepEqual(state.next, ["shout"]);
    assert.deepEqual(
      state.tasks.map((task) => ({ name: task.name, error: task.error, interrupts: task.interrupts })),
      [{ name: "shout", error: null, interrupts: [] }],
    );
    assert.equal((await berth.client.threads.get(thread.thread_id)).status, "interrupted");
  });

  it("forks from an earlier checkpoint without losing the original branch", async () => {
    const thread = await threadWithHistory();
    const history = await berth.client.threads.getHistory<{ text?: string }>(thread.thread_id);
    const atA = history.find((s) => s.values.text === "a")!;
    const fork = await berth.client.threads.updateState(thread.thread_id, {
      values: { text: "fork" },
      asNode: "shout",
      checkpointId: atA.checkpoint.checkpoint_id!,
    });
    const forked = await berth.client.threads.getState<{ text: string }>(thread.thread_id, fork.configurable!.checkpoint_id!);
    assert.equal(forked.values.text, "fork");
    assert.equal(forked.parent_checkpoint?.checkpoint_id, atA.checkpoint.checkpoint_id);
    const original = await berth.client.threads.getState<{ text: string }>(
      thread.thread_id,
      history[0].checkpoint.checkpoint_id!,
    );
    assert.equal(original.values.text, "c");
  });

  it("shows subgraph tasks, and subgraph state with ?subgraphs", async () => {
    const thread = await berth.client.threads.create({ graphId: "nested" });
    await berth.client.threads.updateState(thread.thread_id, { values: { log: ["start"] }, asNode: "__start__" });
    const state = await berth.client.threads.getState(thread.thread_id, undefined, { subgraphs: true });
    assert.deepEqual(state.next, ["child"]);
    assert.equal(state.tasks[0].name, "child");
    assert.deepEqual(state.values, { log: ["start"] });
  });
});
