import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";

const GRAPH_COUNT = 13;

describe("POST /internal/truncate", () => {
  let berth: BerthProcess;
  let plain: BerthProcess;
  before(async () => {
    [berth, plain] = await Promise.all([startBerth({ env: { BERTH_INTERNAL_TRUNCATE: "1" } }), startBerth()]);
  });
  after(() => Promise.all([berth.stop(), plain.stop()]));

  const truncate = (flags: Record<string, boolean>) => request(berth.url, "POST", "/internal/truncate", flags);

  it("is not served unless BERTH_INTERNAL_TRUNCATE is set", async () => {
    const response = await request(plain.url, "POST", "/internal/truncate", { threads: true });
    assert.equal(response.status, 404);
    assert.ok((await plain.client.assistants.search({ limit: 100 })).length > 0);
  });

  it("empties each part it names and keeps the graphs' system assistants", async () => {
    const { client } = berth;
    const custom = await client.assistants.create({ graphId: "agent", name: "custom" });
    const done = await client.threads.create();
    await client.runs.wait(done.thread_id, "agent", { input: { messages: [{ type: "human", content: "hi" }] } });
    const waiting = await client.threads.create();
    await client.runs.create(waiting.thread_id, "agent", { input: { messages: [] }, afterSeconds: 3600 });
    assert.equal((await client.threads.get(waiting.thread_id)).status, "busy");

    assert.deepEqual((await truncate({})).body, { ok: true });
    assert.equal((await client.runs.list(done.thread_id)).length, 1, "no flag empties nothing");

    const emptied = await truncate({ runs: true, store: true });
    assert.deepEqual([emptied.status, emptied.body], [200, { ok: true }]);
    assert.deepEqual(await client.runs.list(done.thread_id), []);
    assert.equal((await client.threads.get(waiting.thread_id)).status, "idle", "a thread its runs left busy is usable");
    const messages = (await client.threads.getState<{ messages: unknown[] }>(done.thread_id)).values.messages;
    assert.equal(messages.length, 2, "checkpoints stay without the checkpointer flag");

    await truncate({ checkpointer: true });
    assert.deepEqual((await client.threads.getState(done.thread_id)).values, {});
    assert.equal((await client.threads.search()).length, 2, "threads stay without the threads flag");

    await truncate({ threads: true });
    assert.deepEqual(await client.threads.search(), []);
    assert.equal((await client.assistants.get(custom.assistant_id)).name, "custom");

    await truncate({ assistants: true });
    const left = await client.assistants.search({ limit: 100 });
    assert.equal(left.length, GRAPH_COUNT);
    assert.ok(left.every((assistant) => assistant.metadata?.created_by === "system"));
    assert.equal((await request(berth.url, "GET", `/assistants/${custom.assistant_id}`)).status, 404);
    // The server works as new afterwards.
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "again" }] },
    });
    assert.equal((values as { messages: unknown[] }).messages.length, 2);
  });

  it("ends the runs under way it empties: their waiters and streams return, and the threads stay gone", async () => {
    const { client } = berth;
    const thread = await client.threads.create();
    // Runs that would go on for minutes, on a thread and stateless, each seen under way before the reset.
    const long = { input: { steps: 10_000, delay_ms: 100 }, streamMode: ["custom" as const] };
    const underWay = async (threadId: string | null) => {
      const stream = threadId === null ? client.runs.stream(null, "slow", long) : client.runs.stream(threadId, "slow", long);
      const first = await stream.next();
      assert.equal(first.value?.event, "metadata");
      assert.equal((await stream.next()).value?.event, "custom");
      const rest = (async () => {
        for await (const _ of stream);
      })();
      return { runId: String((first.value?.data as { run_id?: string } | undefined)?.run_id), rest };
    };
    const [onThread, stateless] = await Promise.all([underWay(thread.thread_id), underWay(null)]);
    const waiting = client.runs.join(thread.thread_id, onThread.runId);

    await truncate({ runs: true, threads: true });
    // A guard, not a measure: before, these waited for an end that was never recorded.
    const guard = AbortSignal.timeout(120_000);
    const settled = (promise: Promise<unknown>) =>
      Promise.race([
        promise.then(
          () => "returned",
          () => "returned",
        ),
        new Promise((resolve) => guard.addEventListener("abort", () => resolve("still waiting"))),
      ]);
    assert.deepEqual(await Promise.all([settled(waiting), settled(onThread.rest), settled(stateless.rest)]), [
      "returned",
      "returned",
      "returned",
    ]);
    assert.deepEqual(await client.threads.search(), []);
    assert.equal((await request(berth.url, "GET", `/threads/${thread.thread_id}`)).status, 404);
  });

  it("answers bad flags with a 422", async () => {
    const response = await truncate({ runs: "yes" } as unknown as Record<string, boolean>);
    assert.equal(response.status, 422);
  });
});
