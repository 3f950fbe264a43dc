import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { TEST_BACKEND } from "@berth/test-support";
import { type ChaosTopology, chaosTopology, type OutageResult } from "./helpers/chaos-topology.js";
import { request } from "@berth/test-support";
import { type FollowedStream, RunLoad } from "./helpers/run-load.js";
import { sseEvents } from "./helpers/sse.js";
import { streamIdProblems } from "./helpers/stream-ids.js";

/** The server answers again within this after an outage: a timeout, not a speed assertion. */
const ANSWERS_WITHIN_MS = 60_000;
const FINAL = new Set(["success", "error", "timeout", "interrupted"]);

/** Each outage is made this many times, the load running throughout. */
const ROUNDS = 2;

interface OutageReport {
  outage: string;
  result: OutageResult;
  /** When it started (ms since the epoch). */
  at: number;
  /** How long making the outage took (a restart included). */
  outageMs: number;
  /** From the end of the outage until every API created and finished a run again. */
  recoveryMs?: number;
}

/** Resolves with how long it took until the API creates and finishes a run again; rejects after the bound. */
async function answersAgain(url: string): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ANSWERS_WITHIN_MS) {
    const signal = AbortSignal.timeout(10_000); // a wait that hangs counts as no answer
    const body = JSON.stringify({ assistant_id: "plain_js", input: { text: "probe" } });
    const answer = await fetch(`${url}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal,
    })
      .then(async (response) => (response.ok ? ((await response.json()) as { text?: string }) : undefined))
      .catch(() => undefined);
    if (answer?.text === "PROBE") return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 250)); // a retrying client's pause
  }
  throw new Error(`${url} did not answer again within ${ANSWERS_WITHIN_MS} ms`);
}

/** The attempts a run took (from its logged metadata events): [1] unless it was taken over. */
async function attemptsOf(url: string, threadId: string, runId: string): Promise<number[]> {
  const response = await fetch(`${url}/threads/${threadId}/runs/${runId}/stream`, { headers: { "last-event-id": "-1" } });
  const attempts: number[] = [];
  for await (const event of sseEvents(response.body!)) {
    if (event.event === "metadata") attempts.push((event.data as { attempt: number }).attempt);
  }
  return attempts;
}

/** Resolves once `done` does, or after `ms` (the load may be blocked by the outage itself). */
function atMost(done: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

/** Creates threads carrying 256 KB of metadata until a write is refused; its answer and thread id. */
async function writeUntilRefused(url: string) {
  const blob = "x".repeat(256 * 1024);
  for (let attempt = 0; attempt < 400; attempt++) {
    const threadId = randomUUID();
    const answer = await request(url, "POST", "/threads", { thread_id: threadId, metadata: { blob } });
    if (answer.status !== 200) return { ...answer, threadId };
  }
  throw new Error("a full disk refused no write");
}

/** The run's status once final, waiting (by joining it) until `deadline` at most. */
async function finalStatus(url: string, threadId: string, runId: string, deadline: number): Promise<string> {
  for (;;) {
    const { status } = (await request(url, "GET", `/threads/${threadId}/runs/${runId}`)).body as { status: string };
    if (FINAL.has(status) || Date.now() >= deadline) return status;
    const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
    await fetch(`${url}/threads/${threadId}/runs/${runId}/join`, { signal })
      .then((r) => r.text())
      .catch(() => undefined);
  }
}

/** The run's whole logged stream (Last-Event-ID: -1), as ids. */
async function loggedIds(url: string, threadId: string, runId: string): Promise<number[]> {
  const response = await fetch(`${url}/threads/${threadId}/runs/${runId}/stream`, { headers: { "last-event-id": "-1" } });
  const ids: number[] = [];
  for await (const event of sseEvents(response.body!)) ids.push(Number(event.id));
  return ids;
}

describe(`chaos: runs under load while processes, the database, Redis and the disk fail (${TEST_BACKEND})`, () => {
  let topology: ChaosTopology;
  let load: RunLoad;
  const outages: OutageReport[] = [];
  let refusal: { status: number; body: unknown; headers: Headers; threadId: string } | undefined;
  let leaseAttempts: number[] = [];
  /** Starting the servers, and letting the clients finish their last runs. */
  const timings: { setupMs?: number; drainMs?: number } = {};
  let failed = false;

  before(
    async () => {
      try {
        await underLoad();
      } catch (error) {
        failed = true;
        throw error;
      }
    },
    { timeout: 300_000 },
  );

  /** Starts the load, makes every outage in turn while it runs, stops it. */
  async function underLoad(): Promise<void> {
    const setup = Date.now();
    topology = await chaosTopology();
    timings.setupMs = Date.now() - setup;
    load = new RunLoad(() => topology.url, { clients: 6, runsPerClient: 60, drainMs: 45_000 });
    load.start();
    await load.progressed(4);

    const inject = async (outage: string, make: () => Promise<OutageResult>) => {
      const started = Date.now();
      const result = await make();
      const report: OutageReport = { outage, result, at: started, outageMs: Date.now() - started };
      outages.push(report);
      if ("skipped" in result) return console.log(`chaos: ${outage} skipped: ${result.skipped}`);
      const recovered = Date.now();
      await Promise.all(topology.apis.map((url) => answersAgain(url)));
      report.recoveryMs = Date.now() - recovered;
      await atMost(load.progressed(5), ANSWERS_WITHIN_MS);
    };
    for (let round = 1; round <= ROUNDS; round++) {
      await inject("kill -9 of a worker", () => topology.killWorker());
      await inject("database connection lost", () => topology.loseDatabase());
      if (round === 1) {
        // The lease keeper reconnected: a run longer than a lease (3 s on PostgreSQL) keeps its one attempt.
        const thread = (await request(topology.url, "POST", "/threads", {})).body as { thread_id: string };
        const run = { assistant_id: "slow", input: { steps: 8, delay_ms: 500 } };
        assert.equal((await request(topology.url, "POST", `/threads/${thread.thread_id}/runs/wait`, run)).status, 200);
        const [{ run_id: runId }] = (await request(topology.url, "GET", `/threads/${thread.thread_id}/runs`)).body as {
          run_id: string;
        }[];
        leaseAttempts = await attemptsOf(topology.url, thread.thread_id, runId);
      }
      await inject("Redis restart", () => topology.restartRedis());
      await inject("disk full", () => fillDisk());
    }
    const stopping = Date.now();
    await load.stop();
    timings.drainMs = Date.now() - stopping;
  }

  /** Fills the data's disk until a write is refused, lets the load meet it a moment, frees it. */
  async function fillDisk(): Promise<OutageResult> {
    const disk = topology.disk;
    if (typeof disk === "string") return { skipped: disk };
    await disk.fill();
    try {
      refusal = await writeUntilRefused(topology.url);
      // The load meets the full disk too, for a moment.
      await atMost(load.progressed(1), 3_000);
    } finally {
      await disk.free();
    }
    return { done: `the data's disk filled to its quota until a write was refused (${refusal.status}), then freed` };
  }

  after(async () => {
    load?.abort();
    if (failed && topology) console.log(topology.outputs());
    await topology?.close();
  });

  const check = (name: string, body: () => Promise<void> | void) =>
    it(name, { timeout: 120_000 }, async () => {
      try {
        await body();
      } catch (error) {
        failed = true;
        throw error;
      }
    });

  check("every acknowledged run ends in a final status, and no thread stays busy", async () => {
    const deadline = Date.now() + ANSWERS_WITHIN_MS;
    const statuses = new Map<string, number>();
    const unfinished: string[] = [];
    for (const run of load.acknowledged) {
      const status = await finalStatus(topology.url, run.threadId, run.runId, deadline);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (!FINAL.has(status)) unfinished.push(`${run.runId} (thread ${run.threadId}): ${status}`);
    }
    const busy: string[] = [];
    for (const threadId of load.threads) {
      const thread = await request(topology.url, "GET", `/threads/${threadId}`);
      if (thread.status === 200 && (thread.body as { status: string }).status === "busy") busy.push(threadId);
    }
    console.log(
      "chaos:",
      JSON.stringify({
        backend: TEST_BACKEND,
        runs_started: load.started,
        acknowledged: load.acknowledged.length,
        ended: Object.fromEntries(statuses),
        responses: Object.fromEntries(load.responses),
        timings,
        outages,
      }),
    );
    assert.deepEqual(unfinished, [], "runs without a final status");
    assert.deepEqual(busy, [], "threads still busy");
  });

  /** Where a stream came in the chaos, and how its run ended: to tell a failure's cause. */
  async function whence(stream: FollowedStream): Promise<string> {
    const run = (await request(topology.url, "GET", `/threads/${stream.threadId}/runs/${stream.runId}`)).body as {
      status: string;
    };
    const after = outages.filter((outage) => outage.at <= stream.startedAt).at(-1);
    const since = after ? `${stream.startedAt - after.at} ms after the start of "${after.outage}"` : "before any outage";
    return `run ${stream.runId} (${run.status}; streamed ${since}; ${stream.reconnections} reconnections)`;
  }

  check("no stream that completed has a gap or a repeated event, and none misses a logged event", async () => {
    const completed = load.streams.filter((stream) => stream.completed && stream.ids.length > 0);
    const problems: string[] = [];
    let events = 0;
    for (const stream of completed) {
      events += stream.ids.length;
      const found = streamIdProblems(stream.ids);
      // From its first event: the metadata of the first attempt that produced any.
      if (stream.ids[0] % 1_000_000_000 !== 0) found.push(`starts at ${stream.ids[0]}`);
      const received = new Set(stream.ids);
      const missing = (await loggedIds(topology.url, stream.threadId, stream.runId)).filter((id) => !received.has(id));
      if (missing.length > 0) found.push(`logged but not received: ${missing.join(", ")}`);
      if (found.length > 0) problems.push(`${await whence(stream)}: ${found.join("; ")}`);
    }
    const reconnected = completed.filter((stream) => stream.reconnections > 0).length;
    console.log(
      "chaos:",
      JSON.stringify({ streams: load.streams.length, completed: completed.length, reconnected, events_checked: events }),
    );
    assert.ok(completed.length > 0, "some streams completed");
    assert.deepEqual(problems, []);
  });

  check("every stream that completed has at least one event (its metadata, or the error it ended with)", async () => {
    const empty = load.streams.filter((stream) => stream.completed && stream.ids.length === 0);
    assert.deepEqual(await Promise.all(empty.map(whence)), []);
  });

  check("outages answer 503 (with Retry-After) or 507 with a reason, never 500", () => {
    const failures = load.failures.map(({ status, detail, retryAfter, request }) => ({ status, detail, retryAfter, request }));
    console.log("chaos:", JSON.stringify({ failures: failures.length, by_status: Object.fromEntries(load.responses) }));
    assert.deepEqual(
      failures.filter((failure) => failure.status === 500 || failure.status === 502),
      [],
    );
    for (const failure of failures) {
      assert.equal(typeof failure.detail, "string", `a reason in ${JSON.stringify(failure)}`);
      if (failure.status === 503) assert.ok(failure.retryAfter, `Retry-After in ${JSON.stringify(failure)}`);
    }
  });

  check("a full disk is a 507 that wrote nothing; once freed, the server works and the database is sound", async () => {
    if (typeof topology.disk === "string") return console.log(`chaos: disk full skipped: ${topology.disk}`);
    assert.ok(refusal, "a write was refused");
    assert.equal(refusal.status, 507, JSON.stringify(refusal.body));
    assert.match((refusal.body as { detail: string }).detail, /^Insufficient storage: /);
    assert.equal(
      (await request(topology.url, "GET", `/threads/${refusal.threadId}`)).status,
      404,
      "the refused thread was not created",
    );
    await answersAgain(topology.url);
    const integrity = topology.integrity();
    if (integrity !== undefined) assert.equal(integrity, "ok");
  });

  check("the lease keeper came back with the database: a run longer than a lease kept its one attempt", () => {
    assert.deepEqual(leaseAttempts, [1]);
  });

  check("no process crashed or stayed broken", async () => {
    assert.ok(await topology.processesAlive(), "every process not killed on purpose is still running");
    assert.equal(outages.filter((outage) => "done" in outage.result && outage.recoveryMs === undefined).length, 0);
  });
});
