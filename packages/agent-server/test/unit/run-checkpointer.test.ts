import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type Checkpoint, type CheckpointMetadata, emptyCheckpoint, MemorySaver, uuid6 } from "@langchain/langgraph-checkpoint";
import { RunCheckpointer } from "../../src/runs/execution/run-checkpointer.js";

/** LangGraph's in-memory saver whose checkpoint writes wait until released, as a slow database would. */
class HeldPutSaver extends MemorySaver {
  private readonly held: (() => void)[] = [];

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata) {
    await new Promise<void>((release) => this.held.push(release));
    return super.put(config, checkpoint, metadata);
  }

  releaseAll(): void {
    for (const release of this.held.splice(0)) release();
  }
}

const metadata: CheckpointMetadata = { source: "loop", step: 0, parents: {} };
const thread = (checkpointId?: string): RunnableConfig => ({
  configurable: { thread_id: "t1", checkpoint_ns: "", ...(checkpointId ? { checkpoint_id: checkpointId } : {}) },
});

describe("a run's checkpointer once closed", () => {
  test("answers the last checkpoint with writes that landed before an earlier checkpoint did", async () => {
    const inner = new HeldPutSaver();
    const saver = new RunCheckpointer(inner, { run_id: "r1" });
    const first = { ...emptyCheckpoint(), id: uuid6(0) };
    const second = { ...emptyCheckpoint(), id: uuid6(1) };
    // LangGraph chains the checkpoint writes, not the task writes against the second one.
    const puts = saver
      .put(thread(), first, metadata, {})
      .then(() => saver.put(thread(first.id), second, { ...metadata, step: 1 }, {}));
    await saver.putWrites(thread(second.id), [["__interrupt__", [{ value: "ready?" }]]], "task-1");
    let landed = false;
    void puts.then(() => {
      landed = true;
    });
    while (!landed) {
      inner.releaseAll();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await saver.close();

    const latest = await saver.getTuple(thread());
    assert.equal(latest?.checkpoint.id, second.id);
    assert.equal(latest?.parentConfig?.configurable?.checkpoint_id, first.id);
    assert.deepEqual(latest?.pendingWrites, [["task-1", "__interrupt__", [{ value: "ready?" }]]]);
    assert.deepEqual(latest, await inner.getTuple(thread()), "the same as the saver reads back");
  });

  test("leaves out writes against a checkpoint a later one replaced", async () => {
    const inner = new MemorySaver();
    const saver = new RunCheckpointer(inner, { run_id: "r1" });
    const first = { ...emptyCheckpoint(), id: uuid6(0) };
    const second = { ...emptyCheckpoint(), id: uuid6(1) };
    await saver.put(thread(), first, metadata, {});
    await saver.put(thread(first.id), second, { ...metadata, step: 1 }, {});
    await saver.putWrites(thread(first.id), [["messages", "late"]], "task-0");
    await saver.close();

    const latest = await saver.getTuple(thread());
    assert.equal(latest?.checkpoint.id, second.id);
    assert.deepEqual(latest?.pendingWrites, []);
  });
});

describe("a run's checkpointer on a thread that had no checkpoint", () => {
  /** An in-memory saver that counts the reads it answers. */
  class CountingSaver extends MemorySaver {
    reads = 0;
    override getTuple(config: RunnableConfig) {
      this.reads += 1;
      return super.getTuple(config);
    }
  }

  test("answers the thread's root reads without the saver until the run writes a root checkpoint", async () => {
    const inner = new CountingSaver();
    const saver = new RunCheckpointer(inner, { run_id: "r1" }, "t1");
    assert.equal(await saver.getTuple(thread()), undefined);
    assert.equal(inner.reads, 0);
    const child = { configurable: { thread_id: "t1", checkpoint_ns: "child:1" } };
    await saver.put(child, { ...emptyCheckpoint(), id: uuid6(0) }, metadata, {});
    assert.ok(await saver.getTuple(child), "a subgraph's checkpoints are read from the saver");
    assert.equal(await saver.getTuple({ configurable: { thread_id: "t2", checkpoint_ns: "" } }), undefined);
    assert.equal(inner.reads, 2, "as are other threads'");
    assert.equal(await saver.getTuple(thread()), undefined, "still no root checkpoint");
    assert.equal(inner.reads, 2);

    const first = { ...emptyCheckpoint(), id: uuid6(1) };
    await saver.put(thread(), first, metadata, {});
    assert.equal((await saver.getTuple(thread()))?.checkpoint.id, first.id);
    assert.equal(inner.reads, 3, "read from the saver once the run wrote one");
  });
});
