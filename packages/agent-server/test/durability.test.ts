import type { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type BerthProcess, newDataDir, startBerth } from "@berth/test-support";

type Messages = { messages: Record<string, unknown>[] };

interface Ids {
  suite: string;
  assistantId: string;
  plainThreadId: string;
  seededThreadId: string;
}

/** Everything the API shows of the records a test wrote, read through the official SDK. */
async function readBack(client: Client, ids: Ids) {
  const [assistant, versions, assistants, assistantCount, systemAssistant, systemVersions] = await Promise.all([
    client.assistants.get(ids.assistantId),
    client.assistants.getVersions(ids.assistantId, { limit: 100 }),
    client.assistants.search({ metadata: { suite: ids.suite }, limit: 100 }),
    client.assistants.count(),
    client.assistants.get("agent"),
    client.assistants.getVersions("agent", { limit: 100 }),
  ]);
  const [plainThread, seededThread, threads, threadCount, state, history, plainHistory] = await Promise.all([
    client.threads.get(ids.plainThreadId),
    client.threads.get<Messages>(ids.seededThreadId),
    client.threads.search({ metadata: { suite: ids.suite }, limit: 100 }),
    client.threads.count({ metadata: { suite: ids.suite } }),
    client.threads.getState<Messages>(ids.seededThreadId),
    client.threads.getHistory<Messages>(ids.seededThreadId, { limit: 100 }),
    client.threads.getHistory(ids.plainThreadId, { limit: 100 }),
  ]);
  return {
    assistant,
    versions,
    assistants,
    assistantCount,
    systemAssistant,
    systemVersions,
    plainThread,
    seededThread,
    threads,
    threadCount,
    state,
    history,
    plainHistory,
  };
}

/** An assistant created then patched (2 versions), a thread with metadata, and a thread seeded with a superstep. */
async function writeRecords(client: Client, suite: string): Promise<Ids> {
  const created = await client.assistants.create({
    graphId: "agent",
    name: "durable",
    description: "first version",
    config: { configurable: { tone: "dry" } },
    metadata: { suite, stage: 1 },
  });
  const patched = await client.assistants.update(created.assistant_id, {
    name: "durable, patched",
    metadata: { stage: 2 },
  });
  assert.equal(patched.version, 2);
  const plain = await client.threads.create({ metadata: { suite, kind: "plain", nested: { list: [1, "two", null] } } });
  const seeded = await client.threads.create({
    graphId: "agent",
    metadata: { suite, kind: "seeded" },
    supersteps: [{ updates: [{ values: { messages: [{ type: "human", content: "hi", id: "human-1" }] }, asNode: "__start__" }] }],
  });
  assert.equal(seeded.status, "interrupted"); // "respond" is next
  return { suite, assistantId: created.assistant_id, plainThreadId: plain.thread_id, seededThreadId: seeded.thread_id };
}

/** The agent's answer written as node "respond": the thread's last write. */
function answer(client: Client, threadId: string) {
  return client.threads.updateState(threadId, {
    values: { messages: [{ type: "ai", content: "hello", id: "ai-1" }] },
    asNode: "respond",
  });
}

const checkpointIds = (states: { checkpoint: { checkpoint_id?: string | null } }[]) =>
  states.map((state) => state.checkpoint.checkpoint_id);

describe("durability across restarts on the same data directory", () => {
  it("every acknowledged write survives kill -9", async () => {
    const dataDir = newDataDir();
    const first = await startBerth({ dataDir });
    let second: BerthProcess | undefined;
    try {
      const ids = await writeRecords(first.client, "durability-kill");
      const before = await readBack(first.client, ids);
      assert.equal(before.versions.length, 2);
      assert.equal(before.history.length, 1);

      // The last write, then SIGKILL as soon as it is acknowledged.
      const update = await answer(first.client, ids.seededThreadId);
      await first.kill();

      second = await startBerth({ dataDir });
      const after = await readBack(second.client, ids);

      // Assistants: the record, both versions, search results; no system assistant re-created.
      assert.deepEqual(after.assistant, before.assistant);
      assert.equal(after.assistant.version, 2);
      assert.equal(after.assistant.name, "durable, patched");
      assert.deepEqual(after.assistant.metadata, { suite: "durability-kill", stage: 2 });
      assert.deepEqual(after.versions, before.versions);
      assert.deepEqual(
        after.versions.map((version) => [version.version, version.name]),
        [
          [2, "durable, patched"],
          [1, "durable"],
        ],
      );
      assert.deepEqual(after.assistants, before.assistants);
      assert.equal(after.assistantCount, before.assistantCount);
      assert.deepEqual(after.systemAssistant, before.systemAssistant);
      assert.deepEqual(after.systemVersions, before.systemVersions);

      // The plain thread is as it was.
      assert.deepEqual(after.plainThread, before.plainThread);
      assert.deepEqual(after.plainHistory, []);

      // The seeded thread holds the last acknowledged write.
      const lastCheckpointId = update.configurable?.checkpoint_id;
      assert.ok(lastCheckpointId);
      assert.equal(after.state.checkpoint.checkpoint_id, lastCheckpointId);
      assert.equal(after.state.parent_checkpoint?.checkpoint_id, before.state.checkpoint.checkpoint_id);
      assert.deepEqual(after.state.next, []);
      assert.deepEqual(after.state.values.messages.slice(0, -1), before.state.values.messages);
      assert.deepEqual(
        after.state.values.messages.map((message) => [message.type, message.content, message.id]),
        [
          ["human", "hi", "human-1"],
          ["ai", "hello", "ai-1"],
        ],
      );
      assert.equal(after.history.length, before.history.length + 1);
      assert.deepEqual(checkpointIds(after.history), [lastCheckpointId, ...checkpointIds(before.history)]);
      assert.deepEqual(after.history.slice(1), before.history);
      assert.deepEqual(after.history[0].values, after.state.values);

      // Its record was updated with the state, in the same acknowledged write.
      const { updated_at: _updatedAt, values, status, ...unchanged } = after.seededThread;
      const {
        updated_at: _updatedBefore,
        values: _valuesBefore,
        status: _statusBefore,
        ...unchangedBefore
      } = before.seededThread;
      assert.deepEqual(unchanged, unchangedBefore);
      assert.deepEqual(values, after.state.values);
      assert.equal(status, "idle");

      // Search and count see both threads, the seeded one with its new values.
      assert.equal(after.threadCount, 2);
      assert.deepEqual(
        after.threads.map((thread) => thread.thread_id),
        before.threads.map((thread) => thread.thread_id),
      );
      assert.deepEqual(
        after.threads.find((thread) => thread.thread_id === ids.plainThreadId),
        before.plainThread,
      );
      assert.deepEqual(
        after.threads.find((thread) => thread.thread_id === ids.seededThreadId),
        after.seededThread,
      );
    } finally {
      await first.kill();
      await second?.stop();
    }
  });

  it("a graceful stop (SIGTERM) and restart keeps everything as it was", async () => {
    const dataDir = newDataDir();
    const first = await startBerth({ dataDir });
    let second: BerthProcess | undefined;
    try {
      const ids = await writeRecords(first.client, "durability-stop");
      await answer(first.client, ids.seededThreadId);
      const before = await readBack(first.client, ids);
      assert.equal(before.versions.length, 2);
      assert.equal(before.history.length, 2);
      assert.equal(before.threadCount, 2);

      await first.stop();
      assert.equal(first.output().includes('"level":50'), false, `errors logged:\n${first.output()}`);

      second = await startBerth({ dataDir });
      const after = await readBack(second.client, ids);
      assert.deepEqual(after, before);
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});
