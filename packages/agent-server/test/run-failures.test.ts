// A failure at any point of a run's life ends the run `error` (the error as the
// stream's last event and in /wait's body), releases its thread and leaves it
// usable. Failures a client cannot provoke (writing the event log, recording the
// run's end) are injected by the test-only fault hooks (helpers/serve-with-faults.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";
import { type SseEvent, sseEvents } from "./helpers/sse.js";
import { collect } from "./helpers/streams.js";
import { startBerthWithFaults } from "./helpers/faulty-berth.js";
import { streamRun } from "./helpers/tracing.js";

const PROJECT = "run-lifecycle";
/** Old behaviour was a run that never ended: bound every test so such a run fails it instead of hanging the suite. */
const BOUND = { timeout: 60_000 };

type ErrorBody = { error: string; message: string };
type Messages = { messages: { type: string; content: string }[] };

/** Streams a new run on the thread to its end; returns its id and events. */
async function runStreamed(berth: BerthProcess, threadId: string, assistantId: string, input: unknown) {
  const events = await streamRun(berth.url, `/threads/${threadId}/runs/stream`, { assistant_id: assistantId, input });
  assert.equal(events[0].event, "metadata");
  return { runId: (events[0].data as { run_id: string }).run_id, events };
}

/** The run's whole log, read once with fetch (Last-Event-ID: -1). */
async function replay(berth: BerthProcess, threadId: string, runId: string): Promise<SseEvent[]> {
  const response = await fetch(`${berth.url}/threads/${threadId}/runs/${runId}/stream`, { headers: { "last-event-id": "-1" } });
  assert.equal(response.status, 200);
  return collect(sseEvents(response.body!));
}

/**
 * What a client sees of a run that failed: `error` as the stream's last (and
 * only error) event, also last in the log; status `error`; /join answering
 * `{__error__}`; its thread `error`, not busy; a cancel answering at once.
 */
async function assertEndedInError(berth: BerthProcess, threadId: string, runId: string, events: SseEvent[], message: RegExp) {
  const errors = events.filter((event) => event.event === "error");
  assert.equal(errors.length, 1, `one error event: ${JSON.stringify(events.map((event) => event.event))}`);
  assert.equal(events.at(-1), errors[0], "the error is the stream's last event");
  const error = errors[0].data as ErrorBody;
  assert.match(error.message, message);
  assert.equal((await berth.client.runs.get(threadId, runId)).status, "error");
  const joined = await request(berth.url, "GET", `/threads/${threadId}/runs/${runId}/join`);
  assert.deepEqual(joined, { ...joined, status: 200, body: { __error__: error } });
  assert.deepEqual((await replay(berth, threadId, runId)).at(-1)?.data, error, "the log ends with the error too");
  assert.equal((await berth.client.threads.get(threadId)).status, "error");
  const cancel = await request(berth.url, "POST", `/threads/${threadId}/runs/${runId}/cancel?wait=true`);
  assert.equal(cancel.status, 204);
}

/** The thread takes a next run (`assistantId`, `input`), which succeeds; then the failed run can be deleted. */
async function assertUsable(berth: BerthProcess, threadId: string, failedRunId: string, assistantId: string, input: unknown) {
  const next = await request(berth.url, "POST", `/threads/${threadId}/runs/wait`, { assistant_id: assistantId, input });
  assert.equal(next.status, 200);
  assert.ok(!(next.body && typeof next.body === "object" && "__error__" in next.body), JSON.stringify(next.body));
  const [latest] = await berth.client.runs.list(threadId, { limit: 1 });
  assert.equal(latest.status, "success");
  assert.equal((await berth.client.threads.get(threadId)).status, "idle");
  assert.equal((await request(berth.url, "GET", `/threads/${threadId}/state`)).status, 200);
  assert.equal((await request(berth.url, "DELETE", `/threads/${threadId}/runs/${failedRunId}`)).status, 204);
  return next.body;
}

describe("a failure anywhere in a run ends it in error and leaves its thread usable", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: PROJECT });
  });
  after(() => berth.stop());

  it("input a reducer rejects is a 422 naming the key, and creates no run", BOUND, async () => {
    const thread = await berth.client.threads.create();
    const alien = { assistant_id: "echo", input: { messages: [{ type: "alien", content: "x" }] } };
    for (const path of [
      `/threads/${thread.thread_id}/runs/wait`,
      `/threads/${thread.thread_id}/runs/stream`,
      `/threads/${thread.thread_id}/runs`,
      "/runs/wait",
    ]) {
      const response = await request(berth.url, "POST", path, alien);
      assert.equal(response.status, 422, `${path}: ${JSON.stringify(response.body)}`);
      const [detail] = (response.body as { detail: { loc: string[]; msg: string; type: string }[] }).detail;
      assert.deepEqual(detail.loc, ["body", "input", "messages"]);
      assert.match(detail.msg, /"messages".*Unable to coerce message/s);
      assert.equal(detail.type, "value_error");
    }
    assert.deepEqual(await berth.client.runs.list(thread.thread_id), []);
    assert.equal((await berth.client.threads.get(thread.thread_id)).status, "idle");
    const values = (await berth.client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ type: "human", content: "hi" }] },
    })) as Messages;
    assert.deepEqual(
      values.messages.map((message) => message.content),
      ["hi", "echo: hi"],
    );
  });

  it("before the graph: its factory throws", BOUND, async () => {
    const thread = await berth.client.threads.create();
    const { runId, events } = await runStreamed(berth, thread.thread_id, "broken_factory", { anything: 1 });
    await assertEndedInError(berth, thread.thread_id, runId, events, /^the graph factory failed$/);
    await assertUsable(berth, thread.thread_id, runId, "echo", { messages: [{ type: "human", content: "still here" }] });
  });

  it("inside a node: it throws", BOUND, async () => {
    const thread = await berth.client.threads.create();
    const { runId, events } = await runStreamed(berth, thread.thread_id, "failing_node", { reason: "test" });
    await assertEndedInError(berth, thread.thread_id, runId, events, /^node failed: test$/);
    assert.equal((events.at(-1)!.data as ErrorBody).error, "NodeError");
    await assertUsable(berth, thread.thread_id, runId, "echo", { messages: [{ type: "human", content: "after" }] });
  });

  it("in a reducer: input valid on its own that the thread's state rejects", BOUND, async () => {
    const thread = await berth.client.threads.create();
    await berth.client.runs.wait(thread.thread_id, "unique_items", { input: { items: ["a"] } });
    const { runId, events } = await runStreamed(berth, thread.thread_id, "unique_items", { items: ["a"] });
    await assertEndedInError(berth, thread.thread_id, runId, events, /item "a" is already there/);
    // The rejected write stays in the checkpoint: reading the state says so with a 409, not a 500.
    const state = await request(berth.url, "GET", `/threads/${thread.thread_id}/state`);
    assert.equal(state.status, 409, JSON.stringify(state.body));
    assert.match((state.body as { detail: string }).detail, /state cannot be restored by its graph: .*item "a" is already there/);
    assert.deepEqual(
      (await berth.client.threads.get(thread.thread_id)).values,
      { items: ["a", "#1"] },
      "the values it last recorded",
    );
    const values = (await assertUsable(berth, thread.thread_id, runId, "unique_items", { items: ["b"] })) as { items: string[] };
    assert.deepEqual(values.items.slice(0, 3), ["a", "#1", "b"]);
  });

  it("while reading the final state: its checkpoint cannot be restored", BOUND, async () => {
    const thread = await berth.client.threads.create();
    const { runId, events } = await runStreamed(berth, thread.thread_id, "fragile_state", {});
    assert.deepEqual(
      events.filter((event) => event.event === "values").at(-1)?.data,
      { note: "fragile" },
      "the graph itself ran",
    );
    await assertEndedInError(
      berth,
      thread.thread_id,
      runId,
      events,
      /^Reading the run's final state failed: the fragile value could not be restored$/,
    );
    assert.deepEqual(await assertUsable(berth, thread.thread_id, runId, "fragile_state", { note: "again" }), { note: "sturdy" });
  });
});

describe("failures of Berth's own writes (test-only fault injection: BERTH_TEST_FAULTS)", () => {
  it("while writing the event log: the run ends in error, its log completed once writing works again", BOUND, async () => {
    const berth = await startBerthWithFaults({ project: PROJECT, env: { BERTH_TEST_FAULTS: "append:once" } });
    try {
      const thread = await berth.client.threads.create();
      const { runId, events } = await runStreamed(berth, thread.thread_id, "echo", {
        messages: [{ type: "human", content: "log" }],
      });
      await assertEndedInError(
        berth,
        thread.thread_id,
        runId,
        events,
        // A short run's last batch goes with its end: the end fails then, and the run ends in error all the same.
        /^(Writing the run's event log failed: )?test fault injected at append/,
      );
      const logged = await replay(berth, thread.thread_id, runId);
      assert.deepEqual(
        logged.map(({ id, event }) => [id, event]),
        events.map(({ id, event }) => [id, event]),
        "every event reached the log",
      );
      await assertUsable(berth, thread.thread_id, runId, "echo", { messages: [{ type: "human", content: "next" }] });
    } finally {
      await berth.stop();
    }
  });

  it("while recording the end: retried with backoff, the run ends in error", BOUND, async () => {
    // The run's own end fails, then two tries of ending it in error: the third one works.
    const berth = await startBerthWithFaults({ project: PROJECT, env: { BERTH_TEST_FAULTS: "finish:3" } });
    try {
      const thread = await berth.client.threads.create();
      const { runId, events } = await runStreamed(berth, thread.thread_id, "echo", {
        messages: [{ type: "human", content: "end" }],
      });
      assert.ok(
        events.some((event) => event.event === "values"),
        "the graph ran",
      );
      await assertEndedInError(berth, thread.thread_id, runId, events, /^test fault injected at finish/);
      await assertUsable(berth, thread.thread_id, runId, "echo", { messages: [{ type: "human", content: "next" }] });
    } finally {
      await berth.stop();
    }
  });
});
