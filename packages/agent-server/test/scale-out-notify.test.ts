import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TEST_BACKEND } from "@berth/test-support";
import { type BerthProcess, newDataDir, request, startBerth } from "@berth/test-support";
import { collect, progressOf } from "./helpers/streams.js";

const skip = TEST_BACKEND !== "postgres" ? "needs PostgreSQL (BERTH_TEST_BACKEND=postgres with DATABASE_URL)" : false;
if (skip) console.warn(`SKIPPED scale-out-notify.test.ts: ${skip}`);

/** No Redis: the processes coordinate through PostgreSQL LISTEN/NOTIFY (an empty REDIS_URL counts as unset). */
const NO_REDIS = { REDIS_URL: "" };

/** A stream's events as compared with a replay of the log (ids, names and data). */
function comparable(events: { id?: string; event: string; data: unknown }[]) {
  return events.map(({ id, event, data }) => ({ id, event, data }));
}

describe("scale-out without Redis: API and worker processes through PostgreSQL LISTEN/NOTIFY", { skip }, () => {
  const dataDir = newDataDir();
  let apiA: BerthProcess;
  let apiB: BerthProcess;
  /** Same database, another NOTIFY channel: nothing it sends reaches the workers. */
  let deafApi: BerthProcess;
  let workers: BerthProcess[] = [];

  before(async () => {
    [apiA, apiB, deafApi, ...workers] = await Promise.all([
      startBerth({ dataDir, role: "api", env: NO_REDIS }),
      startBerth({ dataDir, role: "api", env: NO_REDIS }),
      startBerth({ dataDir, role: "api", env: { ...NO_REDIS, BERTH_REDIS_PREFIX: "berth_elsewhere" } }),
      startBerth({ dataDir, role: "worker", env: { ...NO_REDIS, BERTH_WORKERS: "4" } }),
      startBerth({ dataDir, role: "worker", env: { ...NO_REDIS, BERTH_WORKERS: "4" } }),
    ]);
    for (const process of [apiA, apiB, ...workers]) assert.match(process.output(), /postgres \+ listen\/notify/);
  });
  after(() => Promise.all([apiA, apiB, deafApi, ...workers].map((process) => process?.stop())));

  it("a run created through an API process executes in a worker; wait returns its values", async () => {
    const thread = await apiA.client.threads.create();
    const values = await apiA.client.runs.wait(thread.thread_id, "slow", { input: { steps: 3, delay_ms: 20 } });
    assert.deepEqual(values, { steps: 3, delay_ms: 20, done: 3 });
    const [run] = await apiB.client.runs.list(thread.thread_id);
    assert.equal(run.status, "success");
  });

  it("stateless runs through an API process: wait returns the output, a stream gets every event", async () => {
    const waited = await request(apiA.url, "POST", "/runs/wait", { assistant_id: "plain_js", input: { text: "far" } });
    assert.deepEqual(waited.body, { text: "FAR" });
    const parts = await collect(apiB.client.runs.stream(null, "plain_js", { input: { text: "streamed" } }));
    assert.deepEqual(
      parts.map((part) => part.event),
      ["metadata", "values", "values"],
    );
    assert.deepEqual(parts.at(-1)!.data, { text: "STREAMED" });
  });

  it("a stream through another API process receives every event of a run executing in a worker", async () => {
    const thread = await apiA.client.threads.create();
    const run = await apiA.client.runs.create(thread.thread_id, "slow", {
      input: { steps: 6, delay_ms: 40 },
      streamMode: ["values", "custom", "updates"],
    });
    const live = await collect(apiB.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));
    const replay = await collect(apiA.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));
    assert.equal(live[0].event, "metadata");
    assert.deepEqual(live.at(-1)?.data, { steps: 6, delay_ms: 40, done: 6 });
    assert.deepEqual(comparable(live), comparable(replay));
  });

  it("streams a token-by-token run created and streamed through an API process", async () => {
    const thread = await apiB.client.threads.create();
    const parts = await collect(
      apiB.client.runs.stream(thread.thread_id, "chat", {
        input: { messages: [{ type: "human", content: "hi" }] },
        streamMode: "messages-tuple",
      }),
    );
    assert.ok(parts.filter((part) => part.event === "messages").length > 10);
    const [run] = await apiA.client.runs.list(thread.thread_id);
    const replay = await collect(apiA.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));
    assert.deepEqual(
      parts.map(({ event, data }) => ({ event, data })),
      replay.map(({ event, data }) => ({ event, data })),
    );
  });

  it("cancel with wait from an API process interrupts a run executing in a worker", async () => {
    const thread = await apiA.client.threads.create();
    const run = await apiA.client.runs.create(thread.thread_id, "slow", { input: { steps: 20, delay_ms: 200 } });
    await progressOf(apiB, thread.thread_id, run.run_id, 2);
    await apiB.client.runs.cancel(thread.thread_id, run.run_id, true, "interrupt");
    const cancelled = await apiA.client.runs.get(thread.thread_id, run.run_id);
    assert.equal(cancelled.status, "interrupted");
    const state = await apiA.client.threads.getState(thread.thread_id);
    assert.ok((state.values as { done: number }).done < 20, "stopped before its last step");
  });

  it("workers poll: runs start without any wake-up, after_seconds included", async () => {
    const thread = await deafApi.client.threads.create();
    const created = Date.now();
    const delayed = await deafApi.client.runs.create(thread.thread_id, "plain_js", { input: { text: "late" }, afterSeconds: 1 });
    const other = await deafApi.client.threads.create();
    const now = await deafApi.client.runs.create(other.thread_id, "plain_js", { input: { text: "now" } });
    assert.deepEqual(await apiA.client.runs.join(other.thread_id, now.run_id), { text: "NOW" });
    assert.deepEqual(await apiA.client.runs.join(thread.thread_id, delayed.run_id), { text: "LATE" });
    assert.ok(Date.now() - created >= 1000, "the delayed run waited for its time");
  });
});
