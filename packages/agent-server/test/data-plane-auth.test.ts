import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, freePort, newDataDir, startBerth, TEST_BACKEND } from "@berth/test-support";
import { Redis } from "ioredis";
import { collect, progressOf } from "./helpers/streams.js";

const skip =
  TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres with DATABASE_URL, REDIS_URL)" : false;
if (skip) console.warn(`SKIPPED data-plane-auth.test.ts: ${skip}`);

/** The pino lines a process printed whose message matches `pattern`. */
function logLines(process: BerthProcess, pattern: RegExp): { level: number; msg: string; [field: string]: unknown }[] {
  return process
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{") && pattern.test(line))
    .map((line) => JSON.parse(line));
}

/**
 * The ACL a deployment's agent servers need on a shared Redis (docs/scaling.md):
 * its keys and channels only, and only the commands the broker sends.
 */
function deploymentAcl(user: string, password: string, prefix: string): string[] {
  return [
    user,
    "reset",
    "on",
    `>${password}`,
    `~${prefix}:*`,
    `&${prefix}:*`,
    ...["+ping", "+info", "+quit", "+subscribe", "+unsubscribe", "+publish", "+multi", "+exec"],
    ...["+xadd", "+xrange", "+xrevrange", "+del", "+expire"],
  ];
}

describe("agent server on a PostgreSQL and a Redis that let anyone in", { skip }, () => {
  let api: BerthProcess;

  before(async () => {
    // The test servers: trust authentication on 127.0.0.1, Redis without a password.
    api = await startBerth({ dataDir: newDataDir(), role: "api" });
  });
  after(() => api?.stop());

  it("warns at start, before it listens, naming the risk and what to do", () => {
    const [postgres] = logLines(api, /PostgreSQL \(DATABASE_URL\) accepts connections without a password/);
    assert.equal(postgres?.level, 40);
    assert.equal(postgres?.risk, "postgres_without_password");
    assert.match(postgres!.msg, /docs\/security\.md/);
    const [redis] = logLines(api, /Redis \(REDIS_URL\) runs commands without authentication/);
    assert.equal(redis?.level, 40);
    assert.equal(redis?.risk, "redis_without_authentication");
    assert.match(redis!.msg, /ACL user limited to its BERTH_REDIS_PREFIX/);
  });
});

describe("agent server on a Redis that requires a password", { skip }, () => {
  const password = randomBytes(12).toString("hex");
  let redis: ChildProcess;
  let api: BerthProcess;

  before(async () => {
    const port = await freePort();
    redis = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--requirepass", password],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let output = "";
    await new Promise<void>((resolve, reject) => {
      redis.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) resolve();
      });
      redis.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
    });
    redis.stdout!.resume();
    api = await startBerth({
      dataDir: newDataDir(),
      role: "api",
      env: { REDIS_URL: `redis://:${password}@127.0.0.1:${port}`, LOG_LEVEL: "debug" },
    });
  });
  after(async () => {
    await api?.stop();
    if (redis && redis.exitCode === null) {
      redis.kill("SIGKILL");
      await once(redis, "exit");
    }
  });

  it("checks it and does not warn", () => {
    assert.equal(logLines(api, /Redis \(REDIS_URL\) requires authentication/).length, 1);
    assert.deepEqual(logLines(api, /Redis \(REDIS_URL\) runs commands without authentication/), []);
  });
});

describe("a deployment on a shared Redis through an ACL user limited to its prefix", { skip }, () => {
  const prefix = `berth_acl_${randomBytes(4).toString("hex")}`;
  const user = `${prefix}_user`;
  const password = randomBytes(16).toString("hex");
  let admin: Redis;
  let api: BerthProcess;
  let worker: BerthProcess;
  let userUrl: string;

  before(async () => {
    admin = new Redis(process.env.REDIS_URL!);
    await admin.call("ACL", "SETUSER", ...deploymentAcl(user, password, prefix));
    const url = new URL(process.env.REDIS_URL!);
    url.username = user;
    url.password = password;
    userUrl = url.toString();
    const dataDir = newDataDir();
    const env = { REDIS_URL: userUrl, BERTH_REDIS_PREFIX: prefix };
    [api, worker] = await Promise.all([startBerth({ dataDir, role: "api", env }), startBerth({ dataDir, role: "worker", env })]);
  });
  after(async () => {
    await Promise.all([api, worker].map((process) => process?.stop()));
    await admin?.call("ACL", "DELUSER", user);
    admin?.disconnect();
  });

  it("streams, joins and completes a run executing in the worker process", async () => {
    const thread = await api.client.threads.create();
    const parts = await collect(api.client.runs.stream(thread.thread_id, "slow", { input: { steps: 3, delay_ms: 20 } }));
    assert.equal(parts[0]?.event, "metadata");
    assert.deepEqual(parts.at(-1)?.data, { steps: 3, delay_ms: 20, done: 3 });
    const run = await api.client.runs.create(thread.thread_id, "slow", { input: { steps: 4, delay_ms: 30 } });
    const [events, joined] = await Promise.all([
      collect(api.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })),
      api.client.runs.join(thread.thread_id, run.run_id),
    ]);
    assert.equal(events[0]?.event, "metadata");
    assert.deepEqual(joined, { steps: 4, delay_ms: 30, done: 4 });
  });

  it("cancels a run executing in the worker process", async () => {
    const thread = await api.client.threads.create();
    const run = await api.client.runs.create(thread.thread_id, "slow", { input: { steps: 20, delay_ms: 100 } });
    await progressOf(api, thread.thread_id, run.run_id, 1);
    await api.client.runs.cancel(thread.thread_id, run.run_id, true, "interrupt");
    assert.equal((await api.client.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
  });

  it("the user reaches nothing outside the prefix, and the servers never needed to", async () => {
    const outsider = new Redis(userUrl);
    try {
      await assert.rejects(outsider.publish("berth:wake", "{}"), /NOPERM/);
      await assert.rejects(outsider.get("berth:events:x"), /NOPERM/);
      await assert.rejects(outsider.call("KEYS", "*"), /NOPERM/);
      assert.equal(await outsider.publish(`${prefix}:wake`, "{}"), 2, "both processes listen on the prefix's channel");
    } finally {
      outsider.disconnect();
    }
    for (const process of [api, worker]) assert.doesNotMatch(process.output(), /NOPERM|no permissions/i);
  });
});
