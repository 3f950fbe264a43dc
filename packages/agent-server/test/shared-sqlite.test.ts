import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TEST_BACKEND } from "@berth/test-support";
import { type BerthProcess, newDataDir, request, startBerth } from "@berth/test-support";
import { type SseEvent, sseEvents } from "./helpers/sse.js";
import { collect } from "./helpers/streams.js";

const skip =
  TEST_BACKEND === "postgres"
    ? "shared SQLite only: this pass runs every server on PostgreSQL (BERTH_TEST_BACKEND=postgres), where sharing is the default"
    : false;
if (skip) console.warn(`SKIPPED shared-sqlite.test.ts: ${skip}`);

/** The state of the `tagged` fixture graph: `ran_in` names the process that executed each step. */
type Tagged = { steps: number; delay_ms: number; ran_in: string[] };
type Name = "A" | "B";

/** Every process the tests started, for their logs. */
const started: BerthProcess[] = [];

/** `berth dev` in shared mode on `dataDir`; its graphs see its name as TEST_PROCESS_NAME. */
async function startShared(name: string, dataDir: string, env: Record<string, string> = {}): Promise<BerthProcess> {
  const server = await startBerth({
    project: "shared-sqlite",
    dataDir,
    env: { BERTH_SQLITE_SHARED: "1", BERTH_LEASE_SECONDS: "3", TEST_PROCESS_NAME: name, ...env },
  });
  started.push(server);
  return server;
}

/** A stream's events as compared with a replay of the log. */
const comparable = (events: SseEvent[]) => events.map(({ id, event, data }) => ({ id, event, data }));

const attemptsOf = (events: SseEvent[]) =>
  events.filter((event) => event.event === "metadata").map((event) => (event.data as { attempt: number }).attempt);

/**
 * A run's whole stream through `server`, read with fetch: the SDK would
 * reconnect if the response ended before the run, hiding that it did.
 */
async function joinOnce(server: BerthProcess, threadId: string, runId: string): Promise<SseEvent[]> {
  const response = await fetch(`${server.url}/threads/${threadId}/runs/${runId}/stream`, { headers: { "last-event-id": "-1" } });
  assert.equal(response.status, 200);
  return collect(sseEvents(response.body!));
}

/**
 * Reads a run's stream through `observer` until step `step` (default the
 * first) says which process executes it. A step's progress is emitted before
 * its checkpoint is written: once step 2 reports, step 1 is checkpointed.
 */
async function executorOf(observer: BerthProcess, threadId: string, runId: string, step = 1): Promise<Name> {
  for await (const part of observer.client.runs.joinStream(threadId, runId, { lastEventId: "-1" })) {
    const progress = part.data as { process: Name; progress: number };
    if (part.event === "custom" && progress.progress >= step) return progress.process;
  }
  throw new Error(`run ${runId} ended before its first step`);
}

/** One attempt, and one checkpoint per step: the run was executed once, by one process, from its start to its end. */
async function assertRanOnce(observer: BerthProcess, threadId: string, runId: string, steps: number): Promise<void> {
  const events = await collect(observer.client.runs.joinStream(threadId, runId, { lastEventId: "-1" }));
  assert.deepEqual(attemptsOf(events), [1], `attempts of run ${runId}`);
  const history = await observer.client.threads.getHistory(threadId, { limit: 100 });
  assert.ok(history.every((state) => state.metadata?.run_id === runId));
  assert.deepEqual(
    history.map((state) => state.metadata?.step).reverse(),
    Array.from({ length: steps + 2 }, (_, i) => i - 1),
    `checkpoints of run ${runId}: the input, then one per step`,
  );
}

describe("shared SQLite: two processes on one data directory (BERTH_SQLITE_SHARED)", { skip }, () => {
  const dataDir = newDataDir();
  const servers = {} as Record<Name, BerthProcess>;
  const other = (name: Name): BerthProcess => servers[name === "A" ? "B" : "A"];

  before(async () => {
    // Both apply migrations at once on a new file.
    [servers.A, servers.B] = await Promise.all([startShared("A", dataDir), startShared("B", dataDir)]);
    for (const server of Object.values(servers)) assert.match(server.output(), /, shared\) \+ signals table/);
  });
  after(async () => {
    await Promise.all(Object.values(servers).map((server) => server.stop()));
    // SQLITE_BUSY ("database is locked") included: every writing transaction waits for the other process's instead.
    const errors = started.flatMap((server) =>
      server
        .output()
        .split("\n")
        .filter((line) => /"level":[56]0/.test(line)),
    );
    assert.deepEqual(errors, [], "no process logged an error");
  });

  it("20 runs created through A and B alternately, waited for or streamed, each execute exactly once", async () => {
    const input = { steps: 3, delay_ms: 100 };
    const runs = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const via = servers[i % 2 === 0 ? "A" : "B"];
        const threadId = (await via.client.threads.create()).thread_id;
        if (i % 4 < 2) {
          const values = (await via.client.runs.wait(threadId, "tagged", { input })) as Tagged;
          return { threadId, runId: (await via.client.runs.list(threadId))[0].run_id, values };
        }
        const parts = await collect(via.client.runs.stream(threadId, "tagged", { input, streamMode: ["values", "custom"] }));
        assert.equal(parts[0].event, "metadata");
        return { threadId, runId: (parts[0].data as { run_id: string }).run_id, values: parts.at(-1)!.data as Tagged };
      }),
    );
    const executors = new Set<string>();
    for (const [i, { threadId, runId, values }] of runs.entries()) {
      const observer = servers[i % 2 === 0 ? "B" : "A"];
      assert.equal((await observer.client.runs.get(threadId, runId)).status, "success");
      assert.equal(values.ran_in.length, 3, `steps of run ${runId}: ${values.ran_in}`);
      assert.equal(new Set(values.ran_in).size, 1, `run ${runId} moved between processes: ${values.ran_in}`);
      await assertRanOnce(observer, threadId, runId, 3);
      executors.add(values.ran_in[0]);
    }
    assert.deepEqual([...executors].sort(), ["A", "B"], "both processes executed runs");
  });

  it("streams through both processes get every event and the end of a run, wherever it executes", async () => {
    const thread = await servers.A.client.threads.create();
    const run = await servers.A.client.runs.create(thread.thread_id, "tagged", {
      input: { steps: 8, delay_ms: 50 },
      streamMode: ["values", "custom", "updates"],
    });
    const [onA, onB] = await Promise.all([servers.A, servers.B].map((server) => joinOnce(server, thread.thread_id, run.run_id)));
    const values = onA.at(-1)!.data as Tagged;
    assert.equal(values.ran_in.length, 8);
    const replay = await collect(servers.B.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));
    assert.equal(replay[0].event, "metadata");
    // One of the two followed a run executing in the other process, through the event log.
    assert.deepEqual(comparable(onA), comparable(replay));
    assert.deepEqual(comparable(onB), comparable(replay));
  });

  it("cancel through one process interrupts a run executing in the other", async () => {
    const thread = await servers.A.client.threads.create();
    const run = await servers.A.client.runs.create(thread.thread_id, "tagged", {
      input: { steps: 20, delay_ms: 100 },
      streamMode: ["values", "custom"],
    });
    const executor = await executorOf(servers.B, thread.thread_id, run.run_id);
    await other(executor).client.runs.cancel(thread.thread_id, run.run_id, true, "interrupt");
    assert.equal((await servers.A.client.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
    const ranIn = ((await servers.B.client.threads.getState(thread.thread_id)).values as Tagged).ran_in;
    assert.ok(ranIn.length < 20, "stopped before its last step");
    assert.ok(ranIn.every((name) => name === executor));
  });

  it("stateless runs through either process: wait returns the output, a stream gets every event", async () => {
    const input = { steps: 2, delay_ms: 10 };
    await Promise.all(
      (["A", "B", "A", "B", "A", "B"] as const).map(async (name) => {
        const waited = await request(servers[name].url, "POST", "/runs/wait", { assistant_id: "tagged", input });
        assert.equal(waited.status, 200);
        assert.equal((waited.body as Tagged).ran_in.length, 2);
        const parts = await collect(servers[name].client.runs.stream(null, "tagged", { input, streamMode: ["values"] }));
        assert.deepEqual(
          parts.map((part) => part.event),
          ["metadata", "values", "values", "values"],
        );
        assert.equal((parts.at(-1)!.data as Tagged).ran_in.length, 2);
      }),
    );
  });

  it("a graph blocking its process's event loop longer than the lease keeps its run (no second attempt)", async () => {
    const thread = await servers.A.client.threads.create();
    // The lease is 3 s: renewed from a worker thread meanwhile, or the other process would requeue the run.
    const values = (await servers.A.client.runs.wait(thread.thread_id, "blocking", { input: { ms: 5000 } })) as { spins: number };
    assert.ok(values.spins > 0);
    const [run] = await servers.B.client.runs.list(thread.thread_id);
    assert.deepEqual(
      attemptsOf(await collect(servers.B.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }))),
      [1],
    );
  });

  it("kill -9 of the process executing a run: the other resumes it once its lease lapsed", async () => {
    const thread = await servers.A.client.threads.create();
    const run = await servers.A.client.runs.create(thread.thread_id, "tagged", {
      input: { steps: 10, delay_ms: 300 },
      streamMode: ["values", "custom"],
    });
    // Killed once a step is checkpointed, so the other process resumes after it.
    const doomed = await executorOf(servers.A, thread.thread_id, run.run_id, 2);
    const survivor = other(doomed);
    // Opened before the crash, this stream follows the run across both attempts.
    const following = joinOnce(survivor, thread.thread_id, run.run_id);
    await servers[doomed].kill();
    const values = (await survivor.client.runs.join(thread.thread_id, run.run_id)) as Tagged;
    const events = await following;
    servers[doomed] = await startShared(doomed, dataDir);

    assert.equal(values.ran_in.length, 10, "resumed from its last checkpoint: every step once");
    assert.equal(values.ran_in[0], doomed);
    assert.equal(values.ran_in.at(-1), doomed === "A" ? "B" : "A");
    assert.deepEqual(attemptsOf(events), [1, 2]);
    assert.deepEqual(events.at(-1)!.data, values);
    assert.equal((await survivor.client.runs.get(thread.thread_id, run.run_id)).status, "success");
    const steps = (await survivor.client.threads.getHistory(thread.thread_id, { limit: 100 })).map(
      (state) => state.metadata?.step,
    );
    assert.equal(new Set(steps).size, steps.length, `duplicated steps in ${steps.join(",")}`);
  });

  it("zero-downtime switch: a new process starts beside the old one, whose open stream ends normally after SIGTERM", async () => {
    const switchDir = newDataDir();
    const old = await startShared("old", switchDir);
    const thread = await old.client.threads.create();
    const fresh = await startShared("new", switchDir);
    try {
      // Read with fetch: once a stream ends, the SDK asks the server it streamed from for the run's status, and the old
      // process no longer listens by then (behind a router, that request would reach the new one).
      const response = await fetch(`${old.url}/threads/${thread.thread_id}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "tagged", input: { steps: 8, delay_ms: 150 }, stream_mode: ["values", "custom"] }),
      });
      assert.equal(response.status, 200);
      const stream = sseEvents(response.body!);
      const first = await stream.next();
      assert.equal(first.value?.event, "metadata");
      const stopping = old.stop();
      // Meanwhile, requests go to the new process.
      const created = Promise.all(
        Array.from({ length: 6 }, async () => {
          const threadId = (await fresh.client.threads.create()).thread_id;
          return (await fresh.client.runs.wait(threadId, "tagged", { input: { steps: 2, delay_ms: 50 } })) as Tagged;
        }),
      );
      const streamed = [first.value!, ...(await collect(stream))];
      assert.equal((streamed.at(-1)!.data as Tagged).ran_in.length, 8, "the stream on the old process got the run's end");
      for (const values of await created) assert.equal(values.ran_in.length, 2);
      await stopping;
      const [run] = await fresh.client.runs.list(thread.thread_id);
      assert.equal(run.status, "success");
      assert.deepEqual(comparable(streamed), comparable(await joinOnce(fresh, thread.thread_id, run.run_id)), "every event");
      await assertRanOnce(fresh, thread.thread_id, run.run_id, 8);
    } finally {
      await Promise.all([old.stop(), fresh.stop()]);
    }
  });

  it("SIGTERM: a run outliving the grace period resumes in the other process, followed to its end by a stream there", async () => {
    const switchDir = newDataDir();
    const grace = { BERTH_SHUTDOWN_GRACE_SECONDS: "0.5" };
    const pair = {} as Record<Name, BerthProcess>;
    [pair.A, pair.B] = await Promise.all([startShared("A", switchDir, grace), startShared("B", switchDir, grace)]);
    try {
      const thread = await pair.A.client.threads.create();
      const run = await pair.A.client.runs.create(thread.thread_id, "tagged", {
        input: { steps: 12, delay_ms: 200 },
        streamMode: ["values", "custom"],
      });
      const stopping = await executorOf(pair.A, thread.thread_id, run.run_id);
      const staying = stopping === "A" ? "B" : "A";
      const following = joinOnce(pair[staying], thread.thread_id, run.run_id);
      await pair[stopping].stop();
      const events = await following;
      assert.deepEqual(attemptsOf(events), [1, 2]);
      const values = events.at(-1)!.data as Tagged;
      assert.equal(values.ran_in.length, 12);
      assert.deepEqual([values.ran_in[0], values.ran_in.at(-1)], [stopping, staying]);
      assert.equal((await pair[staying].client.runs.get(thread.thread_id, run.run_id)).status, "success");
    } finally {
      await Promise.all([pair.A.stop(), pair.B.stop()]);
    }
  });
});
