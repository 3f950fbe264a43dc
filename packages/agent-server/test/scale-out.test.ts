import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TEST_BACKEND } from "@berth/test-support";
import { type BerthProcess, newDataDir, request, startBerth } from "@berth/test-support";
import { collect, progressOf } from "./helpers/streams.js";

const skip = TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres)" : false;

describe("scale-out: API and worker processes on PostgreSQL + Redis", { skip }, () => {
  const dataDir = newDataDir();
  let apiA: BerthProcess;
  let apiB: BerthProcess;
  let workers: BerthProcess[] = [];

  before(async () => {
    // Migrations run concurrently from every process starting together.
    [apiA, apiB, ...workers] = await Promise.all([
      startBerth({ dataDir, role: "api" }),
      startBerth({ dataDir, role: "api" }),
      startBerth({ dataDir, role: "worker", env: { BERTH_WORKERS: "4" } }),
      startBerth({ dataDir, role: "worker", env: { BERTH_WORKERS: "4" } }),
    ]);
  });
  after(() => Promise.all([apiA, apiB, ...workers].map((process) => process?.stop())));

  it("an API process executes nothing: a run waits for a worker process", async () => {
    const alone = newDataDir();
    const api = await startBerth({ dataDir: alone, role: "api" });
    try {
      const thread = await api.client.threads.create();
      const run = await api.client.runs.create(thread.thread_id, "plain_js", { input: { text: "later" } });
      assert.equal((await api.client.runs.get(thread.thread_id, run.run_id)).status, "pending");
      const worker = await startBerth({ dataDir: alone, role: "worker" });
      try {
        assert.deepEqual(await api.client.runs.join(thread.thread_id, run.run_id), { text: "LATER" });
      } finally {
        await worker.stop();
      }
    } finally {
      await api.stop();
    }
  });

  it("a worker given a port answers GET /ok there, and no API route", async () => {
    const health = workers[0]!.url;
    assert.match(health, /^http:\/\/127\.0\.0\.1:\d+$/);
    const ok = await fetch(`${health}/ok`);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { ok: true });
    const threads = await fetch(`${health}/threads/search`, { method: "POST", body: "{}" });
    assert.equal(threads.status, 404);
    assert.match(((await threads.json()) as { detail: string }).detail, /GET \/ok only/);
  });

  it("a run created through one API process streams, joins and waits through another", async () => {
    const thread = await apiA.client.threads.create();
    const run = await apiA.client.runs.create(thread.thread_id, "slow", { input: { steps: 4, delay_ms: 30 } });
    const [events, joined] = await Promise.all([
      collect(apiB.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })),
      apiB.client.runs.join(thread.thread_id, run.run_id),
    ]);
    assert.equal(events[0].event, "metadata");
    assert.deepEqual(joined, { steps: 4, delay_ms: 30, done: 4 });
    const stateless = await request(apiB.url, "POST", "/runs/wait", { assistant_id: "plain_js", input: { text: "b" } });
    assert.deepEqual(stateless.body, { text: "B" });
  });

  it("streams tokens live through the API process", async () => {
    const thread = await apiB.client.threads.create();
    const parts = await collect(
      apiB.client.runs.stream(thread.thread_id, "chat", {
        input: { messages: [{ type: "human", content: "hi" }] },
        streamMode: "messages-tuple",
      }),
    );
    assert.ok(parts.filter((part) => part.event === "messages").length > 10);
  });

  it("cancels a run executing in a worker from an API process", async () => {
    const thread = await apiA.client.threads.create();
    const run = await apiA.client.runs.create(thread.thread_id, "slow", { input: { steps: 20, delay_ms: 100 } });
    await progressOf(apiB, thread.thread_id, run.run_id, 2);
    await apiB.client.runs.cancel(thread.thread_id, run.run_id, true, "interrupt");
    const cancelled = await apiA.client.runs.get(thread.thread_id, run.run_id);
    assert.equal(cancelled.status, "interrupted");
  });

  it("enforces one running run per thread across workers (reject is a 409 from any API process)", async () => {
    const thread = await apiA.client.threads.create();
    const run = await apiA.client.runs.create(thread.thread_id, "slow", { input: { steps: 20, delay_ms: 100 } });
    const second = await request(apiB.url, "POST", `/threads/${thread.thread_id}/runs`, { assistant_id: "slow", input: {} });
    assert.equal(second.status, 409);
    await apiB.client.runs.cancel(thread.thread_id, run.run_id, true);
  });

  it("a graph blocking its worker's event loop longer than the lease keeps its run (no second attempt)", async () => {
    const thread = await apiA.client.threads.create();
    // The test backend's lease is 3 s; the lease is renewed from a worker thread meanwhile.
    const values = (await apiA.client.runs.wait(thread.thread_id, "blocking", { input: { ms: 5000 } })) as { spins: number };
    assert.ok(values.spins > 0);
    const events = await collect(
      apiA.client.runs.joinStream(thread.thread_id, (await apiA.client.runs.list(thread.thread_id))[0].run_id, {
        lastEventId: "-1",
      }),
    );
    assert.deepEqual(
      events.filter((e) => e.event === "metadata").map((e) => (e.data as { attempt: number }).attempt),
      [1],
    );
  });

  it("a worker killed mid-run: another worker resumes the run after its lease lapses", async () => {
    // One worker takes the run and dies under way; the next one starts after, so the run cannot end meanwhile,
    // however slowly this machine starts processes.
    await Promise.all(workers.map((worker) => worker.stop()));
    const doomed = await startBerth({ dataDir, role: "worker", env: { BERTH_WORKERS: "1" } });
    workers = [];
    const thread = await apiA.client.threads.create();
    const run = await apiA.client.runs.create(thread.thread_id, "slow", { input: { steps: 20, delay_ms: 500 } });
    await progressOf(apiA, thread.thread_id, run.run_id, 1);
    await doomed.kill();
    assert.equal((await apiA.client.runs.get(thread.thread_id, run.run_id)).status, "running", "held by a dead worker's lease");
    workers.push(await startBerth({ dataDir, role: "worker", env: { BERTH_WORKERS: "1" } }));
    const values = (await apiA.client.runs.join(thread.thread_id, run.run_id)) as { done: number };
    assert.equal(values.done, 20);
    const events = await collect(apiA.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));
    const attempts = events.filter((e) => e.event === "metadata").map((e) => (e.data as { attempt: number }).attempt);
    assert.deepEqual(attempts, [1, 2]);
    assert.equal((await apiA.client.threads.get(thread.thread_id)).status, "idle");
    // Resumed from the last checkpoint: every step appears once in the history.
    const steps = (await apiA.client.threads.getHistory(thread.thread_id, { limit: 100 })).map((state) => state.metadata?.step);
    assert.equal(new Set(steps).size, steps.length, `duplicated steps in ${steps.join(",")}`);
  });

  it("a worker stopping gracefully finishes its runs within the grace period", async () => {
    const graceful = await startBerth({
      dataDir,
      role: "worker",
      env: { BERTH_WORKERS: "1", BERTH_SHUTDOWN_GRACE_SECONDS: "30" },
    });
    const others = workers;
    await Promise.all(others.map((worker) => worker.stop()));
    workers = [graceful];
    const thread = await apiA.client.threads.create();
    const run = await apiA.client.runs.create(thread.thread_id, "slow", { input: { steps: 6, delay_ms: 100 } });
    await progressOf(apiA, thread.thread_id, run.run_id, 1);
    await graceful.stop();
    const ended = await apiA.client.runs.get(thread.thread_id, run.run_id);
    assert.equal(ended.status, "success", "the in-flight run finished before the worker exited");
  });
});
