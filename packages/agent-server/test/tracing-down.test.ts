import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "./helpers/berth-process.js";
import { closedPort, countLines, medianWaitMs, outputWhere, streamRun, tracingEnv } from "./helpers/tracing.js";

const NESTED_RUN = { assistant_id: "nested", input: { log: [] } };

/**
 * A run traced into a service that is down costs only the tracer's CPU (a few
 * ms for `nested`'s 7 traced runs); a run that waited on the unreachable
 * service would take a second or more (the langsmith client's first retry
 * backs off 1–2 s). The margin sits far from both, for busy test machines.
 */
const TRACING_MARGIN_MS = 100;

describe("tracing: a tracing service that is down", () => {
  let down: BerthProcess;
  let untraced: BerthProcess;
  let port: number;

  before(async () => {
    port = await closedPort();
    [down, untraced] = await Promise.all([
      startBerth({ env: tracingEnv(`http://127.0.0.1:${port}/api/v1`, "some-key", "lost") }),
      startBerth(),
    ]);
  });
  after(async () => {
    await Promise.all([down?.stop(), untraced?.stop()]);
  });

  // First, while the process has not yet seen the service fail: the token request itself finds it down.
  it("feedback_keys: the run ends at once, without a feedback event and with the failure logged", async () => {
    const thread = await down.client.threads.create();
    const started = performance.now();
    const events = await streamRun(down.url, `/threads/${thread.thread_id}/runs/stream`, { ...NESTED_RUN, feedback_keys: ["thumbs"] });
    const elapsed = performance.now() - started;
    assert.deepEqual(events.map((event) => event.event), ["metadata", "values", "values", "values"]);
    // A refused connection is not retried for feedback tokens: no backoff of a second or more.
    assert.ok(elapsed < 1000, `the run took ${elapsed.toFixed(0)} ms`);
    const runId = (events[0].data as { run_id: string }).run_id;
    const run = (await request(down.url, "GET", `/threads/${thread.thread_id}/runs/${runId}`)).body as {
      status: string;
      kwargs: Record<string, unknown>;
    };
    assert.equal(run.status, "success");
    assert.equal(run.kwargs.feedback_urls, undefined);
    await outputWhere(down, (text) => /"path":"\/feedback\/tokens"[^\n]*tracing service unreachable/.test(text));
    await outputWhere(down, (text) => /no feedback URL could be created/.test(text));

    // Now the process knows the service is down: the next run asks for no token at all.
    const next = await streamRun(down.url, "/runs/stream", { ...NESTED_RUN, feedback_keys: ["thumbs"] });
    assert.equal(next.at(-1)!.event, "values");
    await outputWhere(down, (text) => /the tracing service is unreachable: no feedback URLs for this run/.test(text));
  });

  it("runs succeed, as fast as untraced ones, and the server logs that traces are lost", async (t) => {
    const traced = await medianWaitMs(down.url, NESTED_RUN, 30);
    const plain = await medianWaitMs(untraced.url, NESTED_RUN, 30);
    t.diagnostic(`median /runs/wait: ${traced.median.toFixed(1)} ms traced (service down), ${plain.median.toFixed(1)} ms untraced`);
    for (const output of traced.outputs) assert.deepEqual(output, { log: ["inner", "after"] });
    assert.ok(
      traced.median < plain.median + TRACING_MARGIN_MS,
      `median ${traced.median.toFixed(1)} ms with the tracing service down, ${plain.median.toFixed(1)} ms untraced`,
    );
    const output = await outputWhere(down, (text) => /tracing service unreachable: traces are lost and runs get no feedback URLs while it is/.test(text));
    assert.match(output, /"tracing_endpoint":"http:\/\/127\.0\.0\.1:\d+\/api\/v1"[^\n]*"error":"ECONNREFUSED"/);
  });

  it("a stopping server gives up the traces it cannot send after a bounded wait", async () => {
    // A fresh process: its first run is traced, and its traces are still waiting for the service when it stops.
    const fresh = await startBerth({ env: tracingEnv(`http://127.0.0.1:${port}/api/v1`, "some-key", "lost") });
    try {
      await fresh.client.runs.wait(null, "nested", { input: { log: [] } });
      const started = performance.now();
      await fresh.stop();
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 9000, `stopping took ${elapsed.toFixed(0)} ms`);
      assert.match(fresh.output(), /pending traces not sent before shutdown/);
    } finally {
      await fresh.stop();
    }
  });
});

describe("tracing off: feedback_keys", () => {
  let berth: BerthProcess;

  before(async () => {
    berth = await startBerth();
  });
  after(() => berth?.stop());

  it("are kept but make no URL and no event; a warning is logged once", async () => {
    const runIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const events = await streamRun(berth.url, "/runs/stream", { ...NESTED_RUN, feedback_keys: ["thumbs"], on_completion: "keep" });
      assert.deepEqual(events.map((event) => event.event), ["metadata", "values", "values", "values"]);
      const { run_id, thread_id } = events[0].data as { run_id: string; thread_id: string };
      runIds.push(run_id);
      const run = (await request(berth.url, "GET", `/threads/${thread_id}/runs/${run_id}`)).body as { kwargs: Record<string, unknown> };
      assert.deepEqual(run.kwargs.feedback_keys, ["thumbs"]);
      assert.equal(run.kwargs.feedback_urls, undefined);
    }
    // A run's warning comes before its "run ended" line: once the second run's is out, both runs have had their say.
    const output = await outputWhere(berth, (text) => new RegExp(`"run_id":"${runIds[1]}"[^\\n]*"msg":"run ended"`).test(text));
    assert.equal(countLines(output, /asked for feedback_keys but tracing is off/), 1);
    const info = (await request(berth.url, "GET", "/info")).body as { flags: { langsmith: boolean } };
    assert.equal(info.flags.langsmith, false);
  });
});
