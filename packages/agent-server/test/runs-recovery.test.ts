import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type BerthProcess, newDataDir, request, startBerth } from "@berth/test-support";
import { type SlowState, type SseEvent, sseEvents } from "./helpers/sse.js";

const progressOf = (events: SseEvent[]) =>
  events.filter((event) => event.event === "custom").map((event) => (event.data as { progress: number }).progress);

/**
 * Starts a `slow` run through POST /runs/stream, reads its events until the
 * second `custom` (progress) event, then kills the server with SIGKILL while
 * the run is mid-step. Returns what the client received before the crash.
 */
async function crashMidRun(berth: BerthProcess, steps: number) {
  const controller = new AbortController();
  const received: SseEvent[] = [];
  let threadId: string;
  let runId: string;
  try {
    threadId = (await berth.client.threads.create()).thread_id;
    const response = await fetch(`${berth.url}/threads/${threadId}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      // durability "sync": a step's checkpoint is written before the next step starts, so the progress a client saw
      // tells which checkpoints exist (with LangGraph's default "async", the last one may still be in flight).
      body: JSON.stringify({
        assistant_id: "slow",
        input: { steps, delay_ms: 250 },
        stream_mode: ["values", "custom"],
        durability: "sync",
      }),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    runId = response.headers.get("content-location")!.split("/").at(-1)!;
    for await (const event of sseEvents(response.body!)) {
      received.push(event);
      if (progressOf(received).length === 2) break;
    }
  } finally {
    await berth.kill(); // at once, mid-step: no await between the event and the kill
    controller.abort();
  }
  assert.deepEqual(progressOf(received), [1, 2]);
  assert.deepEqual(received[0].data, { run_id: runId, attempt: 1 });
  return { threadId, runId, received };
}

/** The run's whole persisted stream, read through the SDK (Last-Event-ID: -1); ends with the run. */
async function replay(berth: BerthProcess, threadId: string, runId: string): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const chunk of berth.client.runs.joinStream(threadId, runId, { lastEventId: "-1" })) events.push(chunk);
  return events;
}

describe("runs survive a crash of the server", () => {
  it("kill -9 mid-run, restart on the same data dir: the run resumes from its last checkpoint and succeeds", async (t) => {
    const dataDir = newDataDir();
    const steps = 6;
    const { threadId, runId, received } = await crashMidRun(await startBerth({ dataDir }), steps);

    const berth = await startBerth({ dataDir });
    try {
      const log = await replay(berth, threadId, runId);
      const run = await berth.client.runs.get(threadId, runId);
      assert.equal(run.status, "success");

      const metadata = log.filter((event) => event.event === "metadata").map((event) => event.data);
      assert.deepEqual(metadata, [
        { run_id: runId, attempt: 1 },
        { run_id: runId, attempt: 2 },
      ]);

      const thread = await berth.client.threads.get<SlowState>(threadId);
      assert.equal(thread.status, "idle");
      assert.equal(thread.values.done, steps);
      assert.deepEqual(await berth.client.runs.join(threadId, runId), { steps, delay_ms: 250, done: steps });

      // Attempt 2 picks up after the last checkpoint of attempt 1: it neither restarts from step 1
      // nor re-applies the run's input, and at most the step cut by the crash is executed twice.
      const secondAttempt = log.slice(
        log.findIndex((event) => event.event === "metadata" && (event.data as { attempt: number }).attempt === 2),
      );
      const resumed = progressOf(secondAttempt);
      assert.ok(resumed[0] >= 2 && resumed[0] <= 3, `attempt 2 started at progress ${resumed[0]}`);
      assert.deepEqual(
        resumed,
        Array.from({ length: steps - resumed[0] + 1 }, (_, i) => resumed[0] + i),
      );
      const executed = [...progressOf(received), ...resumed];
      assert.ok(executed.length <= steps + 1, `steps executed across both attempts: ${executed}`);
      assert.deepEqual(
        [...new Set(executed)].sort((a, b) => a - b),
        Array.from({ length: steps }, (_, i) => i + 1),
      );
      const firstValues = secondAttempt.find((event) => event.event === "values")?.data as SlowState;
      assert.ok(firstValues.done >= 1, "attempt 2 starts from the checkpointed progress");

      const history = await berth.client.threads.getHistory(threadId, { limit: 100 });
      assert.ok(history.every((state) => state.metadata?.run_id === runId));
      assert.deepEqual(
        history.map((state) => [state.metadata?.step, state.metadata?.source]).reverse(),
        [[-1, "input"], ...Array.from({ length: steps + 1 }, (_, step) => [step, "loop"])],
        "one input checkpoint, then one checkpoint per step: nothing restarted",
      );

      await t.test("a client resuming with the last id it saw before the crash gets the new attempt's events", async () => {
        const byId = new Map(log.map((event) => [event.id, event]));
        // Events delivered live in the last moments before the crash may be missing from the log, but an id the
        // client saw never names another event.
        for (const event of received) {
          if (byId.has(event.id)) assert.deepEqual(byId.get(event.id), event, `event id ${event.id} kept its meaning`);
        }
        const lastSeen = received.at(-1)!.id!;
        const resumedStream: SseEvent[] = [];
        for await (const chunk of berth.client.runs.joinStream(threadId, runId, { lastEventId: lastSeen }))
          resumedStream.push(chunk);
        assert.ok(
          resumedStream.some((event) => event.event === "metadata" && (event.data as { attempt: number }).attempt === 2),
          "the resumed stream announces attempt 2",
        );
      });
    } finally {
      await berth.stop();
    }
  });

  it("BERTH_MAX_ATTEMPTS=1: a run cut by kill -9 ends in error after the restart, and so does its thread", async () => {
    const dataDir = newDataDir();
    const env = { BERTH_MAX_ATTEMPTS: "1" };
    const { threadId, runId } = await crashMidRun(await startBerth({ dataDir, env }), 6);

    const berth = await startBerth({ dataDir, env });
    try {
      const log = await replay(berth, threadId, runId);
      const run = await berth.client.runs.get(threadId, runId);
      assert.equal(run.status, "error");

      const output = (await request(berth.url, "GET", `/threads/${threadId}/runs/${runId}/join`)).body as {
        __error__: { error: string; message: string };
      };
      assert.match(output.__error__.message, /attempt/i);
      const error = log.at(-1)!;
      assert.equal(error.event, "error");
      assert.match((error.data as { message: string }).message, /attempt/i);
      const lastAttempt = log.slice(log.map((event) => event.event).lastIndexOf("metadata"));
      assert.equal((lastAttempt[0].data as { attempt: number }).attempt, 2);
      assert.deepEqual(progressOf(lastAttempt), [], "no step ran again");

      const thread = await berth.client.threads.get(threadId);
      assert.equal(thread.status, "error");
    } finally {
      await berth.stop();
    }
  });
});
