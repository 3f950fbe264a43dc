import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { backendEnv, type BerthProcess, newDataDir, startBerth, TEST_BACKEND } from "@berth/test-support";
import { Redis } from "ioredis";
import pg from "pg";
import { collect } from "./helpers/streams.js";

const skip =
  TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres with DATABASE_URL, REDIS_URL)" : false;
if (skip) console.warn(`SKIPPED broker-fuzz.test.ts: ${skip}`);

/** Larger than any message Berth sends on a control channel, and than a NOTIFY payload may be. */
const HUGE = 5 * 1024 * 1024;

/**
 * What a hostile neighbour on the same Redis or PostgreSQL could send: not
 * JSON, JSON of the wrong type, Berth's message kinds with fields of the
 * wrong type or values out of range (some naming the run being followed, so
 * a server that trusts them ends its stream or cancels it), an event whose
 * name would inject SSE lines, and deep nesting.
 */
function garbage(runId: string, threadId: string): string[] {
  const o = '"o":"fuzz"';
  return [
    "not json",
    "",
    "{",
    "null",
    "42",
    '"text"',
    "[]",
    "{}",
    "[1,2,3]",
    `{${o}}`,
    '{"t":"wake"}',
    '{"o":42,"t":"wake"}',
    `{${o},"t":"unknown"}`,
    `{${o},"t":"wake","at":"soon"}`,
    `{${o},"t":"wake","at":1e400}`,
    `{${o},"t":"wake","at":-5}`,
    `{${o},"t":"cancel","r":{"x":1},"why":"interrupt"}`,
    `{${o},"t":"cancel","r":"${runId}","why":"explode"}`,
    `{${o},"t":"cancel","r":"${runId}"}`,
    `{${o},"t":"start","r":42}`,
    `{${o},"t":"start","r":"${runId}","th":{"x":"${threadId}"}}`,
    `{${o},"t":"event","e":null}`,
    `{${o},"t":"event","e":{"seq":"1","event":"values","data":"{}"}}`,
    `{${o},"t":"event","e":{"seq":1,"event":"values\\n\\nevent: injected","data":"{}"}}`,
    `{${o},"t":"event","e":{"seq":2,"event":"values","data":"{}\\n\\ndata: injected"}}`,
    `{${o},"t":"end"}`,
    `{${o},"t":"end","n":null}`,
    `{${o},"t":"end","n":{"status":"exploded","output":1}}`,
    `{${o},"t":"end","r":"${runId}","s":42}`,
    `{${o},"t":"end","r":"${runId}","s":"exploded"}`,
    `{${o},"t":"flushed","r":{"x":1}}`,
    `{${o},"t":"flushed"}`,
    `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
  ];
}

/** Garbage of `bytes` bytes: not JSON, and JSON of Berth's shape with a huge wrong-typed field. */
function hugeGarbage(bytes: number): string[] {
  return ["x".repeat(bytes), JSON.stringify({ o: "fuzz", t: "wake", at: "9".repeat(bytes) })];
}

/** A stream that has produced its first item, and the rest of it once it ended. */
async function started<T>(stream: AsyncGenerator<T>): Promise<{ first: T; rest: Promise<T[]> }> {
  const first = await stream.next();
  assert.ok(!first.done, "the stream ended before its first item");
  const rest = collect({ [Symbol.asyncIterator]: () => stream });
  rest.catch(() => {}); // awaited by the test, unless an earlier assertion failed
  return { first: first.value, rest };
}

/** A thread's stream, until aborted: every event it got by then. */
async function followThread(api: BerthProcess, threadId: string, signal: AbortSignal) {
  const events: { event: string }[] = [];
  const done = (async () => {
    try {
      for await (const part of api.client.threads.joinStream(threadId, { signal })) events.push(part);
    } catch (error) {
      if (!signal.aborted) throw error;
    }
    return events;
  })();
  done.catch(() => {}); // awaited by the test, unless an earlier assertion failed
  return { events, done };
}

/**
 * After the garbage: the run that was followed meanwhile completes with every
 * step in its stream, and a new run is created, streamed and completed
 * through the API process, executed by the worker.
 */
async function assertStillServing(
  api: BerthProcess,
  worker: BerthProcess,
  followed: { threadId: string; runId: string; steps: number; rest: Promise<{ event: string; data: unknown }[]> },
) {
  const events = await followed.rest;
  const last = events.filter((part) => part.event === "values").at(-1);
  assert.equal((last?.data as { done?: number } | undefined)?.done, followed.steps, "the followed run's stream got every step");
  assert.ok(
    events.every((part) => !part.event.includes("injected")),
    "no event injected",
  );
  assert.equal((await api.client.runs.get(followed.threadId, followed.runId)).status, "success");

  const thread = await api.client.threads.create();
  const parts = await collect(api.client.runs.stream(thread.thread_id, "slow", { input: { steps: 3, delay_ms: 10 } }));
  assert.equal(parts[0]?.event, "metadata");
  assert.deepEqual(parts.at(-1)?.data, { steps: 3, delay_ms: 10, done: 3 });
  const [run] = await api.client.runs.list(thread.thread_id);
  assert.equal(run?.status, "success");
  assert.ok(api.alive(), "the API process is alive");
  assert.ok(worker.alive(), "the worker process is alive");
}

/** Each dropped message is logged once, on one line of bounded length. */
function assertDropsLogged(process: BerthProcess) {
  const lines = process.output().split("\n");
  const dropped = lines.filter((line) => line.includes("dropped a malformed broker message"));
  assert.ok(dropped.length > 0, `no drop logged:\n${process.output().slice(-2000)}`);
  for (const line of dropped) {
    assert.match(line, /"level":40/);
    assert.ok(line.length < 2000, `a log line of ${line.length} characters`);
  }
}

describe("broker fuzz: malformed Redis messages on every channel the servers subscribe to", { skip }, () => {
  const prefix = `berth_fuzz_${randomBytes(4).toString("hex")}`;
  let api: BerthProcess;
  let worker: BerthProcess;
  let redis: Redis;

  before(async () => {
    const dataDir = newDataDir();
    const env = { BERTH_REDIS_PREFIX: prefix };
    [api, worker] = await Promise.all([startBerth({ dataDir, role: "api", env }), startBerth({ dataDir, role: "worker", env })]);
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await Promise.all([api, worker].map((process) => process?.stop()));
    redis?.disconnect();
  });

  it("garbage, wrong types and 5 MB payloads on the wake, cancel, thread and run channels and a run's buffer", async () => {
    const thread = await api.client.threads.create();
    const watching = new AbortController();
    const threadStream = await followThread(api, thread.thread_id, watching.signal);
    const steps = 20; // LangGraph's recursion limit is 25 steps
    const run = await api.client.runs.create(thread.thread_id, "slow", { input: { steps, delay_ms: 250 } });
    // Once its first event arrived, the API process listens to the run's channel (and the thread's: the run started).
    const follower = await started(api.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));

    const channels = (await redis.pubsub("CHANNELS", `${prefix}:*`)) as string[];
    for (const expected of ["wake", "cancel", `thread:${thread.thread_id}`, `run:${run.run_id}`])
      assert.ok(channels.includes(`${prefix}:${expected}`), `${prefix}:${expected} is not among ${channels.join(", ")}`);
    // The run's channel first: the run must still be executing while its followers get garbage.
    channels.sort((a, b) => Number(b.includes(":run:")) - Number(a.includes(":run:")));
    for (const channel of channels) {
      for (const payload of [...garbage(run.run_id, thread.thread_id), ...hugeGarbage(HUGE)]) {
        const receivers = await redis.publish(channel, payload);
        assert.ok(receivers > 0, `nobody listens to ${channel} any more`);
      }
    }

    // The run's live buffer, read by a process that starts following the run (replay and last sequence number).
    const buffer = `${prefix}:events:${run.run_id}`;
    for (const payload of [...garbage(run.run_id, thread.thread_id), ...hugeGarbage(HUGE)])
      await redis.xadd(buffer, "*", "m", payload);
    await redis.xadd(buffer, "*", "other", "field", "and", "more");
    const replayed = await started(api.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));
    const joined = await started(api.client.runs.joinStream(thread.thread_id, run.run_id));
    const waited = api.client.runs.join(thread.thread_id, run.run_id);

    await assertStillServing(api, worker, { threadId: thread.thread_id, runId: run.run_id, steps, rest: follower.rest });
    for (const stream of [replayed, joined]) {
      const last = (await stream.rest).filter((part) => part.event === "values").at(-1);
      assert.equal((last?.data as { done?: number } | undefined)?.done, steps);
    }
    assert.deepEqual(await waited, { steps, delay_ms: 250, done: steps });
    watching.abort();
    assert.ok(
      (await threadStream.done).some((part) => part.event === "values"),
      "the thread's stream got the run's events",
    );
    assertDropsLogged(api);
    assertDropsLogged(worker);
  });
});

describe("broker fuzz: malformed PostgreSQL NOTIFY payloads on the servers' channel", { skip }, () => {
  const prefix = `berth_fuzz_${randomBytes(4).toString("hex")}`;
  /** The channel the servers LISTEN on: `<BERTH_REDIS_PREFIX>_runs`. */
  const channel = `${prefix}_runs`;
  let api: BerthProcess;
  let worker: BerthProcess;
  let client: pg.Client;

  before(async () => {
    const dataDir = newDataDir();
    const env = { REDIS_URL: "", BERTH_REDIS_PREFIX: prefix };
    [api, worker] = await Promise.all([startBerth({ dataDir, role: "api", env }), startBerth({ dataDir, role: "worker", env })]);
    // NOTIFY reaches the sessions of the database it is sent in: the servers' own.
    client = new pg.Client({ connectionString: (await backendEnv(dataDir)).DATABASE_URL });
    await client.connect();
  });
  after(async () => {
    await Promise.all([api, worker].map((process) => process?.stop()));
    await client?.end();
  });

  it("garbage, wrong types and the largest payloads PostgreSQL carries", async () => {
    const listening = await client.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM pg_stat_activity WHERE query ILIKE $1",
      [`LISTEN "${channel}"`],
    );
    assert.equal(listening.rows[0]?.count, 2, `both processes LISTEN on ${channel}`);
    const thread = await api.client.threads.create();
    const watching = new AbortController();
    const threadStream = await followThread(api, thread.thread_id, watching.signal);
    const steps = 20; // LangGraph's recursion limit is 25 steps
    const run = await api.client.runs.create(thread.thread_id, "slow", { input: { steps, delay_ms: 150 } });
    const follower = await started(api.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));

    const notify = (payload: string) => client.query("SELECT pg_notify($1, $2)", [channel, payload]);
    for (const payload of garbage(run.run_id, thread.thread_id)) {
      if (Buffer.byteLength(payload) < 8000) await notify(payload);
    }
    // PostgreSQL refuses a payload of 8000 bytes or more itself; the largest it carries is sent instead.
    await assert.rejects(notify("x".repeat(HUGE)), /payload string too long/);
    for (const payload of hugeGarbage(7900)) await notify(payload);

    await assertStillServing(api, worker, { threadId: thread.thread_id, runId: run.run_id, steps, rest: follower.rest });
    watching.abort();
    assert.ok(
      (await threadStream.done).some((part) => part.event === "values"),
      "the thread's stream got the run's events",
    );
    assertDropsLogged(api);
    assertDropsLogged(worker);
  });
});
