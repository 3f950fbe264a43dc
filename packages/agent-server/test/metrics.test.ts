import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, newDataDir, startBerth, TEST_BACKEND } from "@berth/test-support";

const KEY = "metrics-key";
/** Two run slots, so four queued runs leave two of them pending. */
const WORKERS = 2;
/** How long a condition may take to hold (a loaded machine claims runs slowly). */
const DEADLINE_MS = 30_000;
/** Runs of 600 supersteps (a minute) outlast the test: above LangGraph's default limit of 25. */
const LONG_RUN_CONFIG = { recursion_limit: 1000 };

interface Metrics {
  queue: { n_pending: number; n_running: number; next_delayed_at?: string };
  workers?: { max: number; active: number; available: number };
  runs?: {
    finished: { success: number; error: number; timeout: number; interrupted: number };
    duration_ms: { le: number[]; counts: number[]; count: number; sum: number };
  };
  process: { cpu_seconds: number; resident_memory_bytes: number; start_time_seconds: number };
}

/** Polls `read` until `predicate` holds; fails with the last answer at the deadline. */
async function until(read: () => Promise<Metrics>, predicate: (current: Metrics) => boolean): Promise<Metrics> {
  const deadline = Date.now() + DEADLINE_MS;
  let current = await read();
  while (!predicate(current)) {
    assert.ok(Date.now() < deadline, `metrics never matched: ${JSON.stringify(current)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    current = await read();
  }
  return current;
}

describe("GET /metrics", () => {
  let berth: BerthProcess;
  let client: Client;
  before(async () => {
    berth = await startBerth({ env: { BERTH_API_KEY: KEY, BERTH_WORKERS: String(WORKERS) } });
    client = new Client({ apiUrl: berth.url, apiKey: KEY });
  });
  after(() => berth?.stop());

  const metrics = async (): Promise<Metrics> => {
    const response = await fetch(`${berth.url}/metrics?format=json`, { headers: { "x-api-key": KEY } });
    assert.equal(response.status, 200);
    return (await response.json()) as Metrics;
  };

  const longRun = (threadId: string, extra: Record<string, unknown> = {}) =>
    client.runs.create(threadId, "slow", { input: { steps: 600, delay_ms: 100 }, config: LONG_RUN_CONFIG, ...extra });

  it("needs the API key, like every route but /ok and the docs", async () => {
    assert.equal((await fetch(`${berth.url}/metrics`)).status, 401);
  });

  it("counts the database's pending and running runs and this process's slots (JSON by default)", async () => {
    const idle = (await (await fetch(`${berth.url}/metrics`, { headers: { "x-api-key": KEY } })).json()) as Metrics;
    assert.deepEqual(idle.queue, { n_pending: 0, n_running: 0 });
    assert.deepEqual(idle.workers, { max: WORKERS, active: 0, available: WORKERS });

    const threads = await Promise.all([1, 2, 3, 4].map(() => client.threads.create()));
    const first = await longRun(threads[0]!.thread_id);
    const second = await longRun(threads[1]!.thread_id);
    // Waits behind the first on its thread: pending.
    const queuedBehind = await longRun(threads[0]!.thread_id, { multitaskStrategy: "enqueue" });
    // No slot left for it: pending.
    const noSlot = await longRun(threads[2]!.thread_id);
    // Not available for an hour: not counted.
    await longRun(threads[3]!.thread_id, { afterSeconds: 3600 });

    const busy = await until(metrics, (m) => m.queue.n_running === WORKERS);
    const { next_delayed_at: nextDelayedAt, ...counts } = busy.queue;
    assert.deepEqual(counts, { n_pending: 2, n_running: 2 });
    // The delayed run is when it becomes due (a sleeping deployment is woken for it).
    assert.ok(Date.parse(nextDelayedAt ?? "") > Date.now() + 3_000_000, nextDelayedAt);
    assert.deepEqual(busy.workers, { max: WORKERS, active: 2, available: 0 });

    // Pending ones first, so none of them takes a slot the running ones free.
    for (const run of [queuedBehind, noSlot, first, second]) await client.runs.cancel(run.thread_id, run.run_id);
    const drained = await until(metrics, (m) => m.queue.n_running === 0 && m.queue.n_pending === 0 && m.workers?.active === 0);
    assert.deepEqual(drained.workers, { max: WORKERS, active: 0, available: WORKERS });
  });

  it("format=prometheus: the same numbers as gauges with the official server's names", async () => {
    const response = await fetch(`${berth.url}/metrics?format=prometheus`, { headers: { "x-api-key": KEY } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain/);
    const text = await response.text();
    for (const [name, value] of [
      ["lg_api_num_pending_runs", 0],
      ["lg_api_num_running_runs", 0],
      ["lg_api_workers_max", WORKERS],
      ["lg_api_workers_active", 0],
      ["lg_api_workers_available", WORKERS],
    ] as const) {
      assert.match(text, new RegExp(`^# TYPE ${name} gauge$`, "m"), name);
      assert.match(text, new RegExp(`^${name} ${value}$`, "m"), name);
    }
  });

  it("counts the runs this process ended by status, with a histogram of their durations", async () => {
    const before = (await metrics()).runs!;
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "slow", { input: { steps: 2, delay_ms: 10 } });
    await client.runs.wait(thread.thread_id, "slow", { input: { steps: 2, delay_ms: 10 } });
    await client.runs.wait(null, "failing", { input: { reason: "metrics" } }).catch(() => undefined);
    // The end is recorded before the waiter hears of it, and counted right after: poll.
    const after = await until(metrics, (m) => m.runs!.duration_ms.count >= before.duration_ms.count + 3);
    const { finished, duration_ms } = after.runs!;
    assert.equal(finished.success - before.finished.success, 2);
    assert.equal(finished.error - before.finished.error, 1);
    assert.equal(duration_ms.count - before.duration_ms.count, 3);
    assert.ok(duration_ms.sum > before.duration_ms.sum, "two runs of 20 ms at least add to the sum");
    assert.equal(duration_ms.le.length, duration_ms.counts.length);
    for (let i = 1; i < duration_ms.counts.length; i++)
      assert.ok(duration_ms.counts[i]! >= duration_ms.counts[i - 1]!, "cumulative");
    assert.ok(duration_ms.counts.at(-1)! <= duration_ms.count);
    const total = Object.values(finished).reduce((sum, value) => sum + value, 0);
    assert.equal(total, duration_ms.count, "every run counted has a duration");
    assert.ok(after.process.cpu_seconds > 0);
    assert.ok(after.process.resident_memory_bytes > 10_000_000);
    assert.ok(Math.abs(after.process.start_time_seconds - Date.now() / 1000) < 3600);
  });

  it("format=prometheus: runs, durations and the process's resources, with berth_ names", async () => {
    const json = await metrics();
    const response = await fetch(`${berth.url}/metrics?format=prometheus`, { headers: { "x-api-key": KEY } });
    const text = await response.text();
    assert.match(text, /^# TYPE berth_runs_finished_total counter$/m);
    assert.match(text, new RegExp(`^berth_runs_finished_total\\{status="success"\\} ${json.runs!.finished.success}$`, "m"));
    assert.match(text, new RegExp(`^berth_runs_finished_total\\{status="error"\\} ${json.runs!.finished.error}$`, "m"));
    assert.match(text, /^# TYPE berth_run_duration_milliseconds histogram$/m);
    assert.match(
      text,
      new RegExp(`^berth_run_duration_milliseconds_bucket\\{le="\\+Inf"\\} ${json.runs!.duration_ms.count}$`, "m"),
    );
    assert.match(text, new RegExp(`^berth_run_duration_milliseconds_count ${json.runs!.duration_ms.count}$`, "m"));
    assert.match(text, /^berth_run_duration_milliseconds_bucket\{le="1000"\} \d+$/m);
    assert.match(text, /^berth_run_duration_milliseconds_sum \d+$/m);
    assert.match(text, /^# TYPE berth_process_cpu_seconds_total counter$/m);
    assert.match(text, /^berth_process_cpu_seconds_total [\d.e-]+$/m);
    assert.match(text, /^berth_process_resident_memory_bytes [1-9]\d*$/m);
    assert.match(text, /^berth_process_start_time_seconds [1-9]\d*$/m);
  });

  it("refuses an unknown format", async () => {
    const response = await fetch(`${berth.url}/metrics?format=xml`, { headers: { "x-api-key": KEY } });
    assert.equal(response.status, 422);
  });
});

describe("GET /metrics of a process left at the default slots", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth?.stop());

  it("has 100 run slots: graphs mostly await models, so a slot costs memory, not a core", async () => {
    const idle = (await (await fetch(`${berth.url}/metrics`)).json()) as Metrics;
    assert.deepEqual(idle.workers, { max: 100, active: 0, available: 100 });
  });
});

const skip = TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres)" : false;

describe("GET /metrics of an API process (scale-out)", { skip }, () => {
  const dataDir = newDataDir();
  let api: BerthProcess;
  let worker: BerthProcess;
  before(async () => {
    [api, worker] = await Promise.all([
      startBerth({ dataDir, role: "api" }),
      startBerth({ dataDir, role: "worker", env: { BERTH_WORKERS: "1" } }),
    ]);
  });
  after(() => Promise.all([api, worker].map((process) => process?.stop())));

  const metrics = async (): Promise<Metrics> => (await (await fetch(`${api.url}/metrics`)).json()) as Metrics;

  it("counts the runs another process executes, and has no worker slots of its own", async () => {
    const threads = await Promise.all([1, 2].map(() => api.client.threads.create()));
    const runs = await Promise.all(
      threads.map((thread) =>
        api.client.runs.create(thread.thread_id, "slow", { input: { steps: 600, delay_ms: 100 }, config: LONG_RUN_CONFIG }),
      ),
    );
    const busy = await until(metrics, (m) => m.queue.n_running === 1);
    assert.deepEqual(busy.queue, { n_pending: 1, n_running: 1 });
    assert.equal(busy.workers, undefined);
    assert.equal(busy.runs, undefined, "an API process ends no runs");
    assert.ok(busy.process.resident_memory_bytes > 0);
    for (const run of runs.reverse()) await api.client.runs.cancel(run.thread_id, run.run_id);
    await until(metrics, (m) => m.queue.n_running === 0 && m.queue.n_pending === 0);
  });
});
