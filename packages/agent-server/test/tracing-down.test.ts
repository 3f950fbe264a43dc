import assert from "node:assert/strict";
import { createServer, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";
import { closedPort, countLines, outputWhere, streamRun, tracingEnv } from "./helpers/tracing.js";

const NESTED_RUN = { assistant_id: "nested", input: { log: [] } };

// How long runs take while the tracing service is down, beside untraced ones, is measured by bench/tracing.mjs:
// these tests assert what happens, never how fast.

describe("tracing: a tracing service that is down", () => {
  let down: BerthProcess;
  let port: number;

  before(async () => {
    port = await closedPort();
    down = await startBerth({ env: tracingEnv(`http://127.0.0.1:${port}/api/v1`, "some-key", "lost") });
  });
  after(() => down?.stop());

  // First, while the process has not yet seen the service fail: the token request itself finds it down.
  it("feedback_keys: the run ends at once, without a feedback event and with the failure logged", async () => {
    const thread = await down.client.threads.create();
    const events = await streamRun(down.url, `/threads/${thread.thread_id}/runs/stream`, {
      ...NESTED_RUN,
      feedback_keys: ["thumbs"],
    });
    assert.deepEqual(
      events.map((event) => event.event),
      ["metadata", "values", "values", "values"],
    );
    const runId = (events[0].data as { run_id: string }).run_id;
    const run = (await request(down.url, "GET", `/threads/${thread.thread_id}/runs/${runId}`)).body as {
      status: string;
      kwargs: Record<string, unknown>;
    };
    assert.equal(run.status, "success");
    assert.equal(run.kwargs.feedback_urls, undefined);
    const logged = await outputWhere(down, (text) => /no feedback URL could be created/.test(text));
    // A refused connection is not retried for feedback tokens (a retry would back off a second or more): one attempt, logged once.
    assert.equal(countLines(logged, /"path":"\/feedback\/tokens"[^\n]*tracing service unreachable/), 1);

    // Now the process knows the service is down: the next run asks for no token at all.
    const next = await streamRun(down.url, "/runs/stream", { ...NESTED_RUN, feedback_keys: ["thumbs"] });
    assert.equal(next.at(-1)!.event, "values");
    await outputWhere(down, (text) => /the tracing service is unreachable: no feedback URLs for this run/.test(text));
  });

  it("runs succeed, and the server logs that traces are lost", async () => {
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await down.client.runs.wait(null, "nested", { input: { log: [] } }), { log: ["inner", "after"] });
    }
    const output = await outputWhere(down, (text) =>
      /tracing service unreachable: traces are lost and runs get no feedback URLs while it is/.test(text),
    );
    assert.match(output, /"tracing_endpoint":"http:\/\/127\.0\.0\.1:\d+\/api\/v1"[^\n]*"error":"ECONNREFUSED"/);
  });

  it("a stopping server gives up the traces it cannot send after a bounded wait", async () => {
    // A service that takes connections and never answers (a refused connection drops the traces at once instead):
    // the run's traces are still on their way when the process stops.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const silentPort = (silent.address() as { port: number }).port;
    const fresh = await startBerth({ env: tracingEnv(`http://127.0.0.1:${silentPort}/api/v1`, "some-key", "lost") });
    try {
      await fresh.client.runs.wait(null, "nested", { input: { log: [] } });
      await fresh.stop();
      // It waited its bound (5 s), not for the client's retries, then exited.
      assert.match(fresh.output(), /"waited_ms":5000[^\n]*"msg":"pending traces not sent before shutdown/);
    } finally {
      await fresh.stop();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
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
      const events = await streamRun(berth.url, "/runs/stream", {
        ...NESTED_RUN,
        feedback_keys: ["thumbs"],
        on_completion: "keep",
      });
      assert.deepEqual(
        events.map((event) => event.event),
        ["metadata", "values", "values", "values"],
      );
      const { run_id, thread_id } = events[0].data as { run_id: string; thread_id: string };
      runIds.push(run_id);
      const run = (await request(berth.url, "GET", `/threads/${thread_id}/runs/${run_id}`)).body as {
        kwargs: Record<string, unknown>;
      };
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
