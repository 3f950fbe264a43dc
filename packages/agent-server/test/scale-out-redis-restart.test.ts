import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { TEST_BACKEND } from "./helpers/backend.js";
import { type BerthProcess, newDataDir, startBerth } from "./helpers/berth-process.js";

const skip = TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres)" : false;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A private Redis for this test, so restarting it disturbs nothing else. */
async function startRedis(port: number): Promise<ChildProcess> {
  const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    redis.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) resolve();
    });
    redis.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  return redis;
}

describe("scale-out: Redis restarted during a stream", { skip }, () => {
  let port: number;
  let redis: ChildProcess;
  let api: BerthProcess;
  let worker: BerthProcess;

  before(async () => {
    port = await freePort();
    redis = await startRedis(port);
    const dataDir = newDataDir();
    const env = { REDIS_URL: `redis://127.0.0.1:${port}` };
    [api, worker] = await Promise.all([startBerth({ dataDir, role: "api", env }), startBerth({ dataDir, role: "worker", env })]);
  });
  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    redis?.kill("SIGKILL");
  });

  it("the stream continues, or resumes with Last-Event-ID, with no lost event", async () => {
    const thread = await api.client.threads.create();
    const run = await api.client.runs.create(thread.thread_id, "slow", { input: { steps: 20, delay_ms: 150 }, streamMode: ["values", "custom"] });
    const received: { id?: string; event: string }[] = [];
    let restarted = false;
    let lastId: string | undefined;
    // Follow; after the 3rd step, kill Redis and start it again on the same port.
    const follow = async (lastEventId: string) => {
      for await (const part of api.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId })) {
        received.push({ id: part.id, event: part.event });
        lastId = part.id ?? lastId;
        if (!restarted && part.event === "custom" && (part.data as { progress: number }).progress >= 3) {
          restarted = true;
          redis.kill("SIGKILL");
          await once(redis, "exit");
          redis = await startRedis(port);
        }
      }
    };
    try {
      await follow("-1");
    } catch {
      await follow(lastId ?? "-1"); // a client resumes from the last event it saw
    }
    assert.ok(restarted);
    const replay = [];
    for await (const part of api.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })) {
      replay.push({ id: part.id, event: part.event });
    }
    assert.equal((await api.client.runs.get(thread.thread_id, run.run_id)).status, "success");
    assert.deepEqual(received, replay, "every event exactly once, in order");
  });
});
