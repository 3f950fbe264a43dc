import type { Run } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";
import { type SlowState, type SseEvent, sseEvents } from "./helpers/sse.js";

const isProgress = (n: number) => (event: SseEvent) =>
  event.event === "custom" && (event.data as { progress: number }).progress === n;

/** A run's event stream (GET .../stream); `until` reads up to a matching event, `rest` to the end. */
async function follow(base: string, threadId: string, runId: string, options: { lastEventId?: string; query?: string } = {}) {
  const controller = new AbortController();
  const response = await fetch(`${base}/threads/${threadId}/runs/${runId}/stream${options.query ?? ""}`, {
    headers: { "last-event-id": options.lastEventId ?? "-1" },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const events = sseEvents(response.body!);
  const seen: SseEvent[] = [];
  return {
    seen,
    async until(predicate: (event: SseEvent) => boolean): Promise<SseEvent[]> {
      for (;;) {
        const next = await events.next();
        assert.ok(!next.done, "the stream ended before the awaited event");
        seen.push(next.value);
        if (predicate(next.value)) return seen;
      }
    },
    async rest(): Promise<SseEvent[]> {
      for await (const event of events) seen.push(event);
      return seen;
    },
    abort: () => controller.abort(),
  };
}

describe("runs: multitasking, cancellation, scheduling", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  const newThread = async () => (await berth.client.threads.create()).thread_id;

  /** A slow run that lasts long enough to be caught mid-way. */
  const longRun = (threadId: string, extra: Record<string, unknown> = {}) =>
    berth.client.runs.create(threadId, "slow", {
      input: { steps: 40, delay_ms: 100 },
      streamMode: ["values", "custom"],
      ...extra,
    });

  /** Resolves once the run has reported progress 2 (so it is running and has checkpointed step 1). */
  async function midway(threadId: string, runId: string) {
    const stream = await follow(berth.url, threadId, runId);
    await stream.until(isProgress(2));
    return stream;
  }

  const runIdsOfHistory = async (threadId: string) =>
    (await berth.client.threads.getHistory(threadId, { limit: 1000 })).map((state) => state.metadata?.run_id as string);

  const getRun = (threadId: string, runId: string) => request(berth.url, "GET", `/threads/${threadId}/runs/${runId}`);

  /**
   * A run cancelled mid-step leaves its thread `interrupted`, like the reference server (the status
   * follows the thread's state: its last checkpoint still has the cut step to run).
   */
  async function assertCutMidStep(threadId: string) {
    const [thread, state] = await Promise.all([
      berth.client.threads.get<SlowState>(threadId),
      berth.client.threads.getState(threadId),
    ]);
    assert.deepEqual(state.next, ["step"]);
    assert.equal(thread.status, "interrupted");
    return thread;
  }

  it("multitask_strategy reject: of 20 concurrent creations on one thread, one is accepted and 19 get 409", async () => {
    const threadId = await newThread();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        // The accepted run outlasts all 20 requests, however slowly they are served: the thread stays busy.
        request(berth.url, "POST", `/threads/${threadId}/runs`, {
          assistant_id: "slow",
          input: { steps: 100, delay_ms: 100 },
          metadata: { n },
        }),
      ),
    );
    const accepted = responses.filter((response) => response.status === 200);
    const rejected = responses.filter((response) => response.status === 409);
    assert.equal(accepted.length, 1, `statuses: ${responses.map((response) => response.status)}`);
    assert.equal(rejected.length, 19);
    for (const response of rejected) {
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
      const body = response.body as { detail: string };
      assert.deepEqual(Object.keys(body), ["detail"]);
      assert.equal(
        body.detail,
        "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.",
      );
    }
    const run = accepted[0].body as Run;
    const runs = await berth.client.runs.list(threadId);
    assert.deepEqual(
      runs.map((r) => r.run_id),
      [run.run_id],
      "rejected runs leave no trace",
    );
    assert.ok(["pending", "running"].includes(runs[0].status));
    await berth.client.runs.cancel(threadId, run.run_id, true);
    assert.equal((await berth.client.runs.get(threadId, run.run_id)).status, "interrupted");
  });

  it("multitask_strategy enqueue: runs execute one at a time, in creation order", async () => {
    const threadId = await newThread();
    const created: Run[] = [];
    for (let n = 0; n < 4; n++) {
      created.push(
        await berth.client.runs.create(threadId, "slow", {
          input: { steps: 1, delay_ms: 80 },
          multitaskStrategy: "enqueue",
          metadata: { n },
        }),
      );
    }
    // How many have ended by now depends on the machine's speed; that they ran one at a time does not (the
    // checkpoints below group by run).
    const snapshot = await berth.client.runs.list(threadId);
    assert.ok(snapshot.filter((run) => run.status === "running").length <= 1, "at most one running run per thread");

    await berth.client.runs.join(threadId, created.at(-1)!.run_id);
    const ended = await Promise.all(created.map((run) => berth.client.runs.get(threadId, run.run_id)));
    assert.deepEqual(
      ended.map((run) => run.status),
      ["success", "success", "success", "success"],
    );
    for (let i = 1; i < ended.length; i++) assert.ok(ended[i - 1].updated_at <= ended[i].updated_at, "runs ended in order");
    assert.deepEqual(
      (await berth.client.runs.list(threadId)).map((run) => run.metadata?.n),
      [3, 2, 1, 0],
      "listed newest first",
    );

    // The checkpoints, oldest first, group by run in the order the runs were created.
    const order = (await runIdsOfHistory(threadId)).reverse().filter((id, i, all) => i === 0 || all[i - 1] !== id);
    assert.deepEqual(
      order,
      created.map((run) => run.run_id),
    );
    const thread = await berth.client.threads.get<SlowState>(threadId);
    assert.equal(thread.values.done, 4);
    assert.equal(thread.status, "idle");
  });

  it("multitask_strategy interrupt: the running run ends interrupted, keeping its progress for the new run", async () => {
    const threadId = await newThread();
    const first = await longRun(threadId);
    const firstStream = await midway(threadId, first.run_id);

    const second = await berth.client.runs.create(threadId, "slow", {
      input: { steps: 1, delay_ms: 10 },
      multitaskStrategy: "interrupt",
    });
    const firstEvents = await firstStream.rest(); // the interrupted run's stream ends
    await berth.client.runs.join(threadId, second.run_id);

    assert.equal((await berth.client.runs.get(threadId, first.run_id)).status, "interrupted");
    assert.equal((await berth.client.runs.get(threadId, second.run_id)).status, "success");
    const lastProgress = (firstEvents.filter((event) => event.event === "values").at(-1)!.data as SlowState).done;
    assert.ok(lastProgress >= 1);

    const secondEvents: SseEvent[] = [];
    for await (const event of berth.client.runs.joinStream(threadId, second.run_id, { lastEventId: "-1" }))
      secondEvents.push(event);
    const start = secondEvents.find((event) => event.event === "values")!.data as SlowState;
    assert.ok(start.done >= 1, `the new run starts from the interrupted run's progress (done ${start.done})`);
    assert.ok(start.done >= lastProgress);
    const thread = await berth.client.threads.get<SlowState>(threadId);
    assert.equal(thread.values.done, start.done + 1);
    assert.equal(thread.status, "idle");
    assert.ok((await runIdsOfHistory(threadId)).includes(first.run_id), "the interrupted run's checkpoints stay");
  });

  it("multitask_strategy rollback: the running run is deleted with its checkpoints; the new run starts from before it", async () => {
    const threadId = await newThread();
    const earlier = await berth.client.runs.wait(threadId, "slow", { input: { steps: 1, delay_ms: 10 } });
    assert.equal((earlier as SlowState).done, 1);
    const first = await longRun(threadId);
    const firstStream = await midway(threadId, first.run_id);

    const second = await berth.client.runs.create(threadId, "slow", {
      input: { steps: 1, delay_ms: 10 },
      multitaskStrategy: "rollback",
      streamMode: ["values"],
    });
    await firstStream.rest();
    await berth.client.runs.join(threadId, second.run_id);

    const gone = await getRun(threadId, first.run_id);
    assert.equal(gone.status, 404);
    assert.equal((await berth.client.runs.get(threadId, second.run_id)).status, "success");
    assert.ok(!(await runIdsOfHistory(threadId)).includes(first.run_id), "no checkpoint of the rolled back run is left");
    const secondStart = await berth.client.runs.joinStream(threadId, second.run_id, { lastEventId: "-1" }).next();
    assert.equal(secondStart.value?.event, "metadata");
    const thread = await berth.client.threads.get<SlowState>(threadId);
    assert.equal(thread.values.done, 2, "the earlier run's step plus the new run's; none of the rolled back run's");
    assert.equal(thread.status, "idle");
  });

  it("cancel with action=interrupt answers 202 at once; the run then ends interrupted with its progress", async () => {
    const threadId = await newThread();
    const run = await longRun(threadId);
    const stream = await midway(threadId, run.run_id);
    const response = await request(berth.url, "POST", `/threads/${threadId}/runs/${run.run_id}/cancel?action=interrupt`);
    assert.equal(response.status, 202);
    await stream.rest();
    await berth.client.runs.join(threadId, run.run_id);
    assert.equal((await berth.client.runs.get(threadId, run.run_id)).status, "interrupted");
    const thread = await assertCutMidStep(threadId);
    assert.ok(thread.values.done >= 1 && thread.values.done < 40);
  });

  it("cancel with wait=true answers 204 once the run has stopped", async () => {
    const threadId = await newThread();
    const run = await longRun(threadId);
    await midway(threadId, run.run_id).then((stream) => stream.abort());
    const response = await request(
      berth.url,
      "POST",
      `/threads/${threadId}/runs/${run.run_id}/cancel?wait=true&action=interrupt`,
    );
    assert.equal(response.status, 204);
    assert.equal(((await getRun(threadId, run.run_id)).body as Run).status, "interrupted");
    await assertCutMidStep(threadId);
  });

  it("cancel with action=rollback deletes the run and its checkpoints", async (t) => {
    const threadId = await newThread();
    const run = await longRun(threadId);
    await midway(threadId, run.run_id).then((stream) => stream.abort());
    await berth.client.runs.cancel(threadId, run.run_id, true, "rollback");
    assert.equal((await getRun(threadId, run.run_id)).status, 404);
    assert.deepEqual(await berth.client.threads.getHistory(threadId), []);
    const thread = await berth.client.threads.get(threadId);
    assert.equal(thread.status, "idle");
    await t.test("the thread's values are back to what they were before the run (null: it never ran)", () =>
      assert.equal(thread.values, null),
    );
  });

  it("cancels a pending run (interrupt: kept as interrupted; rollback: deleted)", async () => {
    const threadId = await newThread();
    const run = await berth.client.runs.create(threadId, "slow", { input: { steps: 1, delay_ms: 10 }, afterSeconds: 60 });
    assert.equal(run.status, "pending");
    assert.equal((await berth.client.threads.get(threadId)).status, "busy");
    const response = await request(berth.url, "POST", `/threads/${threadId}/runs/${run.run_id}/cancel?wait=true`);
    assert.equal(response.status, 204);
    assert.equal(((await getRun(threadId, run.run_id)).body as Run).status, "interrupted");
    assert.equal((await berth.client.threads.get(threadId)).status, "idle");
    assert.deepEqual(await berth.client.threads.getHistory(threadId), [], "it never ran");

    const other = await berth.client.runs.create(threadId, "slow", { input: { steps: 1, delay_ms: 10 }, afterSeconds: 60 });
    await berth.client.runs.cancel(threadId, other.run_id, true, "rollback");
    assert.equal((await getRun(threadId, other.run_id)).status, 404);
    assert.equal((await berth.client.threads.get(threadId)).status, "idle");
  });

  it("cancelling a run that already ended answers at once and changes nothing", async () => {
    const threadId = await newThread();
    const run = await berth.client.runs.create(threadId, "slow", { input: { steps: 1, delay_ms: 10 } });
    await berth.client.runs.join(threadId, run.run_id);
    for (const query of ["?wait=true", "?wait=true&action=rollback"]) {
      const response = await fetch(`${berth.url}/threads/${threadId}/runs/${run.run_id}/cancel${query}`, {
        method: "POST",
        signal: AbortSignal.timeout(2000),
      }).catch((error: Error) => error);
      assert.ok(response instanceof Response, `cancel${query} answered (got ${response})`);
      assert.ok([202, 204, 409].includes(response.status), `cancel${query}: ${response.status}`);
    }
    assert.equal((await berth.client.runs.get(threadId, run.run_id)).status, "success");
  });

  it("POST /runs/cancel cancels by run_ids and by thread_id", async () => {
    const [a, b, c, bystander] = await Promise.all([newThread(), newThread(), newThread(), newThread()]);
    const runA = await longRun(a);
    const runB = await longRun(b);
    const bystanderRun = await berth.client.runs.create(bystander, "slow", { input: { steps: 3, delay_ms: 100 } });
    await Promise.all([midway(a, runA.run_id), midway(b, runB.run_id)]).then((streams) => {
      for (const stream of streams) stream.abort();
    });

    const unknown = await request(berth.url, "POST", "/runs/cancel", { run_ids: [runA.run_id, crypto.randomUUID()] });
    assert.equal(unknown.status, 404);
    assert.equal((await berth.client.runs.get(a, runA.run_id)).status, "running", "nothing cancelled when an id is unknown");

    await berth.client.runs.cancelMany({ runIds: [runA.run_id, runB.run_id] });
    await Promise.all([berth.client.runs.join(a, runA.run_id), berth.client.runs.join(b, runB.run_id)]);
    assert.equal((await berth.client.runs.get(a, runA.run_id)).status, "interrupted");
    assert.equal((await berth.client.runs.get(b, runB.run_id)).status, "interrupted");

    // By thread: its running run and the one queued behind it.
    const running = await longRun(c);
    const queued = await berth.client.runs.create(c, "slow", { input: { steps: 1, delay_ms: 10 }, multitaskStrategy: "enqueue" });
    await midway(c, running.run_id).then((stream) => stream.abort());
    const response = await request(berth.url, "POST", "/runs/cancel", { thread_id: c });
    assert.equal(response.status, 204);
    await berth.client.runs.join(c, running.run_id);
    await berth.client.runs.join(c, queued.run_id);
    assert.equal((await berth.client.runs.get(c, running.run_id)).status, "interrupted");
    assert.equal((await berth.client.runs.get(c, queued.run_id)).status, "interrupted");
    assert.ok(!(await runIdsOfHistory(c)).includes(queued.run_id), "the queued run never started");
    await assertCutMidStep(c);

    await berth.client.runs.join(bystander, bystanderRun.run_id);
    assert.equal((await berth.client.runs.get(bystander, bystanderRun.run_id)).status, "success", "other threads' runs go on");
  });

  it("after_seconds delays the start of a run", async () => {
    const threadId = await newThread();
    const run = await berth.client.runs.create(threadId, "slow", { input: { steps: 1, delay_ms: 10 }, afterSeconds: 1 });
    assert.equal(run.status, "pending");
    assert.equal((await berth.client.runs.get(threadId, run.run_id)).status, "pending");
    const values = await berth.client.runs.join(threadId, run.run_id);
    assert.deepEqual(values, { steps: 1, delay_ms: 10, done: 1 });
    assert.equal((await berth.client.runs.get(threadId, run.run_id)).status, "success");
    const history = await berth.client.threads.getHistory(threadId, { limit: 100 });
    const firstCheckpoint = history.at(-1)!;
    const delay = Date.parse(firstCheckpoint.created_at!) - Date.parse(run.created_at);
    assert.ok(delay >= 950, `the run started ${delay} ms after its creation`);
  });

  it("on_disconnect=cancel interrupts the run when the streaming client goes away", async () => {
    const threadId = await newThread();
    const controller = new AbortController();
    const response = await fetch(`${berth.url}/threads/${threadId}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        assistant_id: "slow",
        input: { steps: 40, delay_ms: 100 },
        stream_mode: ["custom"],
        on_disconnect: "cancel",
      }),
      signal: controller.signal,
    });
    const runId = response.headers.get("content-location")!.split("/").at(-1)!;
    for await (const event of sseEvents(response.body!)) if (isProgress(1)(event)) break;
    controller.abort();
    await berth.client.runs.join(threadId, runId);
    assert.equal((await berth.client.runs.get(threadId, runId)).status, "interrupted");
    await assertCutMidStep(threadId);
  });

  it("a joiner with cancel_on_disconnect=true interrupts the run when it goes away", async () => {
    const threadId = await newThread();
    const run = await longRun(threadId);
    const stream = await follow(berth.url, threadId, run.run_id, { query: "?cancel_on_disconnect=true" });
    await stream.until(isProgress(1));
    stream.abort();
    await berth.client.runs.join(threadId, run.run_id);
    assert.equal((await berth.client.runs.get(threadId, run.run_id)).status, "interrupted");
  });

  it("a run over BERTH_RUN_TIMEOUT_SECONDS ends with status timeout", async () => {
    const limited = await startBerth({ env: { BERTH_RUN_TIMEOUT_SECONDS: "0.5" } });
    try {
      const threadId = (await limited.client.threads.create()).thread_id;
      const run = await limited.client.runs.create(threadId, "slow", { input: { steps: 40, delay_ms: 100 } });
      await limited.client.runs.join(threadId, run.run_id);
      const ended = await limited.client.runs.get(threadId, run.run_id);
      assert.equal(ended.status, "timeout");
      const thread = await limited.client.threads.get<SlowState>(threadId);
      assert.notEqual(thread.status, "busy");
      // How many steps ran before the limit depends on the machine's speed: fewer than all of them, and the thread keeps them.
      assert.ok(thread.values.done < 40, `cut short: done ${thread.values.done}`);
      // A quick run on the same server is not affected.
      const quick = await limited.client.runs.wait(threadId, "slow", { input: { steps: 1, delay_ms: 10 } });
      assert.equal((quick as SlowState).done, thread.values.done + 1);
    } finally {
      await limited.stop();
    }
  });
});
