import type { Config } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TEST_BACKEND } from "@berth/test-support";
import { type BerthProcess, newDataDir, startBerth } from "@berth/test-support";
import { PrivateRedis } from "./helpers/redis-server.js";

const skip = TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres)" : false;

/**
 * How long each outage lasts: 0 comes back before the first reconnection
 * attempt; longer outages outlast a client's retries of queued commands. The
 * run's steps come every 30 ms, each emitting two events at once (custom, then
 * values), so restarts land between events of one log batch.
 */
const OUTAGES_MS = [0, 400, 0, 1200, 0, 150, 0, 600];

/** The stream is stuck when no event came for this long (the longest outage is 1.2 s). */
const STALL_MS = 30_000;

/** Progress steps the follower must see live between two restarts. */
const STEPS_BETWEEN_RESTARTS = 5;

type Seen = { id?: string; event: string };

/** The highest progress a follower saw, and promises of it reaching a value. */
class Progress {
  value = 0;
  private waiters: { at: number; resolve: () => void }[] = [];
  private ended = false;

  saw(progress: number): void {
    this.value = Math.max(this.value, progress);
    for (const waiter of this.waiters.filter((w) => w.at <= this.value)) waiter.resolve();
    this.waiters = this.waiters.filter((w) => w.at > this.value);
  }

  end(): void {
    this.ended = true;
    for (const waiter of this.waiters) waiter.resolve();
  }

  /** Resolves with whether the follower saw `at` (false: its stream ended first). */
  reached(at: number): Promise<boolean> {
    if (this.value >= at || this.ended) return Promise.resolve(this.value >= at);
    return new Promise((resolve) => this.waiters.push({ at, resolve: () => resolve(this.value >= at) }));
  }
}

describe("scale-out: Redis restarted during a stream", { skip }, () => {
  let redis: PrivateRedis;
  let api: BerthProcess;
  let worker: BerthProcess;

  before(async () => {
    redis = await PrivateRedis.start();
    const dataDir = newDataDir();
    const env = { REDIS_URL: redis.url };
    [api, worker] = await Promise.all([startBerth({ dataDir, role: "api", env }), startBerth({ dataDir, role: "worker", env })]);
  });
  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await redis?.down();
  });

  it("a stream followed in another process loses no event and ends, across several restarts", async () => {
    const thread = await api.client.threads.create();
    const steps = 200;
    const run = await api.client.runs.create(thread.thread_id, "slow", {
      input: { steps, delay_ms: 30 },
      // LangGraph's own key (the run's config is handed to the graph as it is): one superstep per step.
      config: { recursionLimit: steps + 10 } as Config,
      streamMode: ["values", "custom"],
    });
    const received: Seen[] = [];
    const progress = new Progress();

    // A stream that stalls fails the test (with the processes' output) instead of hanging it.
    const stalled = new AbortController();
    let watchdog = setTimeout(() => stalled.abort(), STALL_MS);
    const follow = async () => {
      let lastId = "-1";
      // A client resumes from the last event it saw when its connection fails (the SDK would too).
      for (let attempt = 0; ; attempt++) {
        try {
          const stream = api.client.runs.joinStream(thread.thread_id, run.run_id, {
            lastEventId: lastId,
            signal: stalled.signal,
          });
          for await (const part of stream) {
            clearTimeout(watchdog);
            watchdog = setTimeout(() => stalled.abort(), STALL_MS);
            received.push({ id: part.id, event: part.event });
            lastId = part.id ?? lastId;
            if (part.event === "custom") progress.saw((part.data as { progress: number }).progress);
          }
          return;
        } catch (error) {
          if (attempt >= 5 || stalled.signal.aborted) throw error;
        }
      }
    };
    const restarts: number[] = [];
    const chaos = async () => {
      for (const outageMs of OUTAGES_MS) {
        // Live events flow again (the previous restart is over) before the next one.
        if (!(await progress.reached(progress.value + STEPS_BETWEEN_RESTARTS))) return;
        await redis.restart(outageMs);
        restarts.push(progress.value);
      }
    };
    try {
      await Promise.all([follow().finally(() => progress.end()), chaos()]);
    } catch (error) {
      console.log(
        `worker (${worker.alive() ? "running" : "exited"}):\n${worker.output().slice(-8000)}\napi:\n${api.output().slice(-8000)}`,
      );
      throw stalled.signal.aborted ? new Error(`no event for ${STALL_MS} ms after id ${received.at(-1)?.id}`) : error;
    } finally {
      clearTimeout(watchdog);
    }

    assert.equal(
      restarts.length,
      OUTAGES_MS.length,
      `every restart happened while the run streamed (at progress ${restarts.join(", ")})`,
    );
    const replay: Seen[] = [];
    for await (const part of api.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })) {
      replay.push({ id: part.id, event: part.event });
    }
    assert.equal((await api.client.runs.get(thread.thread_id, run.run_id)).status, "success");
    assert.deepEqual(
      replay.map((part) => part.id),
      replay.map((_, index) => String(index)),
      "the log holds every event of the single attempt",
    );
    assert.equal(replay.filter((part) => part.event === "custom").length, steps);
    const ids = received.map((part) => part.id);
    const missing = replay.filter((part) => !ids.includes(part.id)).map((part) => part.id);
    const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
    assert.deepEqual({ missing, repeated }, { missing: [], repeated: [] }, "every event reached the follower once");
    assert.deepEqual(received, replay, "every event exactly once, in order");
  });
});
