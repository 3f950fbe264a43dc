// Recovery of runs whose process stopped: at once when the process can tell
// the lease is dead (its own previous incarnation, or a dead process of the same
// host), within the default lease otherwise, and without spending an attempt
// when the process handed the run over at SIGTERM. On PostgreSQL the processes
// are `serve --role api|worker`; on SQLite they share the data directory
// (BERTH_SQLITE_SHARED), which has the same lease logic.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { TEST_BACKEND } from "@berth/test-support";
import { type BerthProcess, newDataDir, request, startBerth } from "@berth/test-support";
import type { SseEvent } from "./helpers/sse.js";
import { startBerthWithFaults } from "./helpers/faulty-berth.js";
import { collect } from "./helpers/streams.js";

const postgres = TEST_BACKEND === "postgres";
const PROJECT = "run-lifecycle";
/** Long enough that only a process telling a dead lease from a live one explains a prompt resume. */
const LONG_LEASE = { BERTH_LEASE_SECONDS: "300" };
/** The default lease (the test backend's own setting removed). */
const DEFAULT_LEASE = { BERTH_LEASE_SECONDS: "" };
/** Test-only (runs/execution/test-faults.ts): this process cannot judge other processes by their pid, as if on another host. */
const OTHER_HOST = { BERTH_TEST_FAULTS: "pid-check:off" };

/** A process that executes runs: a worker on PostgreSQL, a `berth dev` sharing the SQLite data directory otherwise. */
function startExecutor(dataDir: string, env: Record<string, string>): Promise<BerthProcess> {
  return postgres
    ? startBerthWithFaults({ project: PROJECT, dataDir, role: "worker", env })
    : startBerthWithFaults({ project: PROJECT, dataDir, env: { BERTH_SQLITE_SHARED: "1", ...env } });
}

/**
 * A process clients talk to while executors come and go: an API process on
 * PostgreSQL (it executes nothing); on SQLite a shared `berth dev` that
 * cannot judge the others' pids, so it resumes nothing before their lease lapses.
 */
function startObserver(dataDir: string, env: Record<string, string>): Promise<BerthProcess> {
  return postgres
    ? startBerthWithFaults({ project: PROJECT, dataDir, role: "api", env })
    : startBerthWithFaults({ project: PROJECT, dataDir, env: { BERTH_SQLITE_SHARED: "1", ...OTHER_HOST, ...env } });
}

/** A `gated` run: under way until `open()` creates its gate file. */
async function createGated(berth: BerthProcess, threadId: string) {
  const gate = join(newDataDir(), "gate");
  const run = await berth.client.runs.create(threadId, "gated", { input: { gate }, streamMode: ["values", "custom"] });
  return { runId: run.run_id, gate, open: () => writeFileSync(gate, "open") };
}

/**
 * Resolves once attempt `attempt` of the run waits at its gate, as its stream
 * says. The stream is joined right before that attempt's first event id
 * (attempt k numbers its events from (k-1)·10⁹).
 */
async function waiting(berth: BerthProcess, threadId: string, runId: string, attempt: number): Promise<void> {
  const lastEventId = String((attempt - 1) * 1_000_000_000 - 1);
  let started = false;
  for await (const part of berth.client.runs.joinStream(threadId, runId, { lastEventId })) {
    if (part.event === "metadata") started = (part.data as { attempt: number }).attempt === attempt;
    if (part.event === "custom" && started) return;
  }
  throw new Error(`run ${runId} ended before attempt ${attempt} waited at its gate`);
}

/**
 * An observer and an executor, the executor running a gated run. On SQLite
 * the executor creates the run before the observer starts, so the executor is
 * the one that claims it. `survivorEnv`: a process that stays to resume the
 * run, started once it is under way (on SQLite, the observer is it).
 */
async function runUnderWay(dataDir: string, env: Record<string, string>, survivorEnv?: Record<string, string>) {
  const api = postgres ? await startObserver(dataDir, env) : undefined;
  const executor = await startExecutor(dataDir, env);
  const creator = api ?? executor;
  const threadId = (await creator.client.threads.create()).thread_id;
  const gated = await createGated(creator, threadId);
  await waiting(creator, threadId, gated.runId, 1);
  const survivor = api && survivorEnv ? await startExecutor(dataDir, survivorEnv) : undefined;
  const observer = api ?? (survivorEnv ? await startExecutor(dataDir, survivorEnv) : await startObserver(dataDir, env));
  return { observer, executor, survivor, threadId, ...gated };
}

const attemptsOf = (events: SseEvent[]) =>
  events.filter((event) => event.event === "metadata").map((event) => (event.data as { attempt: number }).attempt);

/**
 * The run ended `success` past its gate, and its logged stream shows
 * `attempts` (from the first one listed: the events of an attempt cut by
 * kill -9 may have died with it before they reached the log).
 */
async function assertFinished(observer: BerthProcess, threadId: string, runId: string, gate: string, attempts: number[]) {
  assert.deepEqual(await observer.client.runs.join(threadId, runId), { gate, passed: true });
  assert.equal((await observer.client.runs.get(threadId, runId)).status, "success");
  const events = await collect(observer.client.runs.joinStream(threadId, runId, { lastEventId: "-1" }));
  assert.deepEqual(
    attemptsOf(events).filter((attempt) => attempt >= attempts[0]),
    attempts,
  );
  assert.equal((await observer.client.threads.get(threadId)).status, "idle");
}

/**
 * Kills (kill -9) the executor of a gated run, restarts it with the same
 * arguments if `restart`, and checks that the run resumes (within `boundMs`
 * when given) and finishes.
 */
async function killAndResume(
  t: TestContext,
  options: { env: Record<string, string>; survivorEnv?: Record<string, string>; restart?: boolean; boundMs?: number },
): Promise<void> {
  const dataDir = newDataDir();
  const { observer, executor, survivor, threadId, runId, gate, open } = await runUnderWay(
    dataDir,
    options.env,
    options.survivorEnv,
  );
  let restarted: BerthProcess | undefined;
  try {
    await executor.kill();
    if (options.restart) restarted = await startExecutor(dataDir, options.env);
    const resumed = () => waiting(observer, threadId, runId, 2);
    if (options.boundMs) await t.test(`resumed within ${options.boundMs / 1000} s`, { timeout: options.boundMs }, resumed);
    else await resumed();
    open();
    await assertFinished(observer, threadId, runId, gate, [2]);
  } finally {
    await Promise.all([observer.stop(), executor.kill(), survivor?.stop(), restarted?.stop()]);
  }
}

describe("handing runs over and resuming them", () => {
  it("SIGTERM hands a run over without spending an attempt (BERTH_MAX_ATTEMPTS=1, stopped twice, still succeeds)", {
    timeout: 90_000,
  }, async () => {
    const dataDir = newDataDir();
    const env = { BERTH_MAX_ATTEMPTS: "1", BERTH_SHUTDOWN_GRACE_SECONDS: "0.2" };
    let berth = await startBerth({ project: PROJECT, dataDir, env });
    try {
      const threadId = (await berth.client.threads.create()).thread_id;
      const { runId, gate, open } = await createGated(berth, threadId);
      for (const attempt of [1, 2]) {
        await waiting(berth, threadId, runId, attempt);
        await berth.stop();
        berth = await startBerth({ project: PROJECT, dataDir, env });
      }
      // Each attempt handed back at SIGTERM went back to the queue uncounted: with a limit of 1, a counted one
      // would have ended the run "Run exceeded 1 attempts".
      await waiting(berth, threadId, runId, 3);
      open();
      await assertFinished(berth, threadId, runId, gate, [1, 2, 3]);
    } finally {
      await berth.stop();
    }
  });

  it("kill -9, then the same process restarts: it resumes its previous incarnation's run at once", { timeout: 90_000 }, (t) =>
    killAndResume(t, { env: LONG_LEASE, restart: true }),
  );

  it("kill -9: another process of the same host resumes the run at once", { timeout: 90_000 }, (t) =>
    killAndResume(t, { env: LONG_LEASE, survivorEnv: LONG_LEASE }),
  );

  it(
    "kill -9: a worker that cannot judge the dead one's pid (another host) resumes the run once the default lease lapsed",
    { timeout: 90_000 },
    (t) =>
      // The bound is the lease: 10 s by default, plus a sweep (2 s) and a claim; it was 30 s (+ up to 15 s) before.
      killAndResume(t, { env: DEFAULT_LEASE, survivorEnv: { ...DEFAULT_LEASE, ...OTHER_HOST }, boundMs: 25_000 }),
  );

  it("cancel of a run whose process died: wait=true returns once the run ended, then it can be deleted", {
    timeout: 90_000,
  }, async () => {
    const dataDir = newDataDir();
    const { observer, executor, threadId, runId } = await runUnderWay(dataDir, LONG_LEASE);
    let next: BerthProcess | undefined;
    try {
      await executor.kill();
      // Nobody executes the run now, and nobody can tell yet: the cancel is kept with the run.
      const accepted = await request(observer.url, "POST", `/threads/${threadId}/runs/${runId}/cancel?wait=false`);
      assert.equal(accepted.status, 202);
      const waited = request(observer.url, "POST", `/threads/${threadId}/runs/${runId}/cancel?wait=true`);
      // A new process of the host finds the dead lease and requeues the run; the attempt that claims it honours the cancel.
      next = await startExecutor(dataDir, LONG_LEASE);
      assert.equal((await waited).status, 204);
      assert.equal((await observer.client.runs.get(threadId, runId)).status, "interrupted");
      const events = await collect(observer.client.runs.joinStream(threadId, runId, { lastEventId: "-1" }));
      // (Attempt 1's last events may have died with its process before they were logged.)
      const second = events.slice(
        events.findIndex((event) => event.event === "metadata" && (event.data as { attempt: number }).attempt === 2),
      );
      assert.deepEqual(attemptsOf(second), [2]);
      assert.deepEqual(
        second.filter((event) => event.event === "custom"),
        [],
        "attempt 2 did not run the graph",
      );
      assert.notEqual((await observer.client.threads.get(threadId)).status, "busy");
      assert.equal((await request(observer.url, "DELETE", `/threads/${threadId}/runs/${runId}`)).status, 204);
      const values = (await observer.client.runs.wait(threadId, "echo", {
        input: { messages: [{ type: "human", content: "after" }] },
      })) as {
        messages: { content: string }[];
      };
      assert.equal(values.messages.at(-1)?.content, "echo: after");
    } finally {
      await Promise.all([observer.stop(), executor.kill(), next?.stop()]);
    }
  });
});
