import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, newDataDir, runBerthExpectingFailure, startBerth, TEST_BACKEND } from "@berth/test-support";
import { type Delivery, Receiver } from "./helpers/webhook-receiver.js";

interface WebhookDelivery {
  run_id: string;
  thread_id: string;
  url: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

const SECRET = "outbox-test-secret";
/** The receivers listen on loopback: every server here opts in to private targets, but the one that checks the refusal. */
const ALLOW_PRIVATE = { BERTH_WEBHOOK_ALLOW_PRIVATE: "1" };
const hook = (name: string) => `/${name}/${crypto.randomUUID()}`;

async function readDelivery(berth: BerthProcess, threadId: string, runId: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${berth.url}/threads/${threadId}/runs/${runId}/webhook`);
  return { status: response.status, body: await response.json() };
}

/** Polls the run's delivery until `done` holds (or the deadline passes: the last one read is returned). */
async function deliveryWhen(
  berth: BerthProcess,
  threadId: string,
  runId: string,
  done: (delivery: WebhookDelivery) => boolean,
  deadlineMs = 20_000,
): Promise<WebhookDelivery> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const read = await readDelivery(berth, threadId, runId);
    const delivery = read.status === 200 ? (read.body as WebhookDelivery) : undefined;
    if (delivery && done(delivery)) return delivery;
    if (Date.now() > deadline) assert.fail(`delivery still ${JSON.stringify(read.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const ended = (delivery: WebhookDelivery) => delivery.status !== "pending";

/** Checks the `X-Berth-Signature` of a delivery as a receiver would: HMAC-SHA256 of "<t>.<raw body>". */
function verifySignature(delivery: Delivery, secret: string): number {
  const header = String(delivery.headers["x-berth-signature"]);
  const parts = Object.fromEntries(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  assert.equal(parts.t, delivery.headers["x-berth-timestamp"], "the signed timestamp is the timestamp header");
  const expected = createHmac("sha256", secret).update(`${parts.t}.${delivery.raw}`).digest("hex");
  assert.equal(parts.v1, expected, "the signature verifies");
  return Number(parts.t);
}

describe("webhooks from the outbox", () => {
  const receiver = new Receiver((delivery, nth) => {
    if (delivery.path.startsWith("/flaky3") && nth <= 2) return 503;
    if (delivery.path.startsWith("/rejects")) return 400;
    return 200;
  });
  let berth: BerthProcess;

  before(async () => {
    await receiver.start();
    berth = await startBerth({
      project: "webhook-headers",
      env: { ...ALLOW_PRIVATE, BERTH_WEBHOOK_SECRET: SECRET, LG_WEBHOOK_TOKEN: "token-1" },
    });
  });
  after(async () => {
    await berth.stop();
    await receiver.stop();
  });

  it("signs the delivery, adds the configured headers, and shows it delivered", { timeout: 30_000 }, async () => {
    const path = hook("signed");
    const thread = await berth.client.threads.create();
    const before = Math.floor(Date.now() / 1000);
    const run = await berth.client.runs.create(thread.thread_id, "slow", {
      input: { steps: 1, delay_ms: 10 },
      webhook: `${receiver.url}${path}`,
    });
    const [delivery] = await receiver.waitFor(path);
    const signedAt = verifySignature(delivery, SECRET);
    assert.ok(signedAt >= before - 1, "the timestamp is the time of sending");
    assert.equal(delivery.headers["x-static"], "fixed");
    assert.equal(delivery.headers.authorization, "Bearer token-1", "the header template read LG_WEBHOOK_TOKEN");
    assert.equal(delivery.body.run_id, run.run_id);
    assert.equal(delivery.body.status, "success");
    assert.deepEqual(delivery.body.values, { steps: 1, delay_ms: 10, done: 1 });
    for (const key of ["run_started_at", "run_ended_at", "webhook_sent_at"]) {
      assert.equal(typeof delivery.body[key], "string", `${key} is sent`);
    }
    assert.ok(!("error" in delivery.body));
    const tampered = { ...delivery, raw: delivery.raw.replace('"success"', '"error"') };
    assert.throws(() => verifySignature(tampered, SECRET), "a changed body does not verify");

    const read = await deliveryWhen(berth, thread.thread_id, run.run_id, ended);
    assert.equal(read.status, "delivered");
    assert.equal(read.attempts, 1);
    assert.equal(read.last_status, 200);
    assert.equal(read.last_error, null);
    assert.equal(read.url, `${receiver.url}${path}`);
    assert.equal(receiver.to(path).length, 1);
  });

  it("retries a receiver that fails twice, then shows three attempts", { timeout: 30_000 }, async () => {
    const path = hook("flaky3");
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "slow", {
      input: { steps: 1, delay_ms: 10 },
      webhook: `${receiver.url}${path}`,
    });
    const received = await receiver.waitFor(path, 3);
    for (const delivery of received) verifySignature(delivery, SECRET);
    const read = await deliveryWhen(berth, thread.thread_id, run.run_id, ended);
    assert.equal(read.status, "delivered");
    assert.equal(read.attempts, 3);
    assert.equal(read.last_status, 200);
    assert.equal(receiver.to(path).length, 3);
    const logged = berth
      .output()
      .split("\n")
      .filter((line) => line.includes(run.run_id) && line.includes("webhook attempt failed: retrying"));
    assert.equal(logged.length, 2, "each failed attempt is logged with the run's id");
    assert.match(logged[0], new RegExp(`"thread_id":"${thread.thread_id}"`));
    assert.match(logged[0], /"status":503/);
  });

  it("gives up at once on a 4xx answer and shows why", { timeout: 30_000 }, async () => {
    const path = hook("rejects");
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "failing", {
      input: { reason: "rejected" },
      webhook: `${receiver.url}${path}`,
    });
    const [delivery] = await receiver.waitFor(path);
    assert.equal(delivery.body.status, "error");
    assert.match(String(delivery.body.error), /Boom: rejected/);
    const read = await deliveryWhen(berth, thread.thread_id, run.run_id, ended);
    assert.equal(read.status, "failed");
    assert.equal(read.attempts, 1);
    assert.equal(read.last_status, 400);
    assert.match(String(read.last_error), /400/);
  });

  it("answers 404 for a run without a webhook", async () => {
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.wait(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 1 } });
    const runs = await berth.client.runs.list(thread.thread_id);
    assert.ok(run);
    assert.equal((await readDelivery(berth, thread.thread_id, runs[0].run_id)).status, 404);
  });
});

describe("webhooks survive a crash", () => {
  it("kill -9 while the receiver is down: after a restart it is delivered exactly once", { timeout: 90_000 }, async () => {
    const receiver = new Receiver();
    await receiver.start();
    await receiver.stop(); // down: its port refuses connections
    const dataDir = newDataDir();
    const env = { ...ALLOW_PRIVATE, BERTH_WEBHOOK_TIMEOUT_SECONDS: "2" };
    const path = hook("crash");
    let berth = await startBerth({ dataDir, env });
    let threadId: string;
    let runId: string;
    try {
      threadId = (await berth.client.threads.create()).thread_id;
      const run = await berth.client.runs.create(threadId, "slow", {
        input: { steps: 1, delay_ms: 10 },
        webhook: `${receiver.url}${path}`,
      });
      runId = run.run_id;
      await berth.client.runs.join(threadId, runId);
      const failing = await deliveryWhen(berth, threadId, runId, (delivery) => delivery.attempts >= 1);
      assert.equal(failing.status, "pending", "a refused connection is retried");
      assert.equal(failing.last_status, null);
      assert.ok(failing.last_error);
    } finally {
      await berth.kill();
    }
    await receiver.start(); // up again, on the same port
    berth = await startBerth({ dataDir, env });
    try {
      const [delivery] = await receiver.waitFor(path);
      assert.equal(delivery.body.run_id, runId);
      assert.equal(delivery.body.status, "success");
      const read = await deliveryWhen(berth, threadId, runId, ended, 30_000);
      assert.equal(read.status, "delivered");
      assert.equal(receiver.to(path).length, 1, "delivered exactly once");
    } finally {
      await berth.stop();
      await receiver.stop();
    }
  });
});

describe("webhooks with two processes on one PostgreSQL database", () => {
  const skip = TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres)" : false;
  it("delivers each webhook once", { skip, timeout: 120_000 }, async () => {
    // Every first attempt fails, so the retries are claimed by whichever process polls first.
    const receiver = new Receiver((_delivery, nth) => (nth === 1 ? 503 : 200));
    await receiver.start();
    const dataDir = newDataDir();
    const servers = await Promise.all([startBerth({ dataDir, env: ALLOW_PRIVATE }), startBerth({ dataDir, env: ALLOW_PRIVATE })]);
    try {
      const runs = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const berth = servers[i % 2];
          const path = hook(`pair${i}`);
          const thread = await berth.client.threads.create();
          const run = await berth.client.runs.create(thread.thread_id, "slow", {
            input: { steps: 1, delay_ms: 10 },
            webhook: `${receiver.url}${path}`,
          });
          return { threadId: thread.thread_id, runId: run.run_id, path };
        }),
      );
      for (const run of runs) {
        const read = await deliveryWhen(servers[0], run.threadId, run.runId, ended, 60_000);
        assert.equal(read.status, "delivered");
        assert.equal(read.attempts, 2);
      }
      for (const run of runs) assert.equal(receiver.to(run.path).length, 2, `${run.path}: one failed attempt, one delivery`);
      // Logs are written asynchronously: the line may follow the delivery by a moment.
      const logDeadline = Date.now() + 10_000;
      const delivered = () => servers.some((berth) => berth.output().includes('"msg":"webhook delivered"'));
      while (!delivered() && Date.now() < logDeadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(delivered(), "a process logged the delivery");
    } finally {
      await Promise.all(servers.map((berth) => berth.stop()));
      await receiver.stop();
    }
  });
});

describe("webhook URL policy", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "webhook-policy" });
  });
  after(() => berth.stop());

  const refusals: [string, string, RegExp][] = [
    ["require_https", "http://a.example.com/hook", /https/],
    ["allowed_domains", "https://evil.com/hook", /allowed_domains/],
    ["allowed_domains (the apex of a wildcard)", "https://example.com/hook", /allowed_domains/],
    ["allowed_ports", "https://a.example.com:444/hook", /allowed_ports/],
    ["max_url_length", `https://a.example.com/${"x".repeat(80)}`, /max_url_length/],
    ["disable_loopback (a relative URL)", "/hook", /disable_loopback/],
  ];
  for (const [rule, webhook, message] of refusals) {
    it(`refuses a webhook that breaks ${rule} with a 422, writing nothing`, async () => {
      const thread = await berth.client.threads.create();
      for (const path of [`/threads/${thread.thread_id}/runs`, `/threads/${thread.thread_id}/runs/wait`, "/runs"]) {
        const response = await fetch(`${berth.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ assistant_id: "slow", input: { steps: 1, delay_ms: 1 }, webhook }),
        });
        assert.equal(response.status, 422, path);
        const body = (await response.json()) as { detail: { loc: string[]; msg: string; type: string }[] };
        assert.deepEqual(body.detail[0].loc, ["body", "webhook"]);
        assert.match(body.detail[0].msg, message);
        assert.equal(typeof body.detail[0].type, "string");
      }
      assert.deepEqual(await berth.client.runs.list(thread.thread_id), [], "no run was written");
      assert.equal((await berth.client.threads.get(thread.thread_id)).status, "idle");
    });
  }

  it("accepts a webhook the policy allows", async () => {
    const thread = await berth.client.threads.create();
    for (const webhook of ["https://a.example.com/hook", "https://hooks.example.org:8443/hook"]) {
      const run = await berth.client.runs.create(thread.thread_id, "slow", {
        input: { steps: 1, delay_ms: 1 },
        webhook,
        multitaskStrategy: "enqueue",
      });
      assert.equal((run as unknown as { kwargs: { webhook: string } }).kwargs.webhook, webhook);
    }
  });

  it("a policy langgraph.json gets wrong stops the start", async () => {
    const { code, output } = await runBerthExpectingFailure({ project: "webhook-bad-policy" });
    assert.equal(code, 1);
    assert.match(output, /webhooks\.url\.allowed_ports/);
  });
});

describe("private webhook targets", () => {
  let berth: BerthProcess;
  before(async () => {
    // `serve`, not `dev`, and no BERTH_WEBHOOK_ALLOW_PRIVATE: private targets are refused.
    berth = await startBerth({ role: "all", env: { BERTH_WEBHOOK_ALLOW_PRIVATE: "" } });
  });
  after(() => berth.stop());

  for (const webhook of [
    "http://127.0.0.1:9/hook",
    "http://localhost:9/hook",
    "http://[::1]:9/hook",
    "http://10.1.2.3/hook",
    "http://172.20.0.1/hook",
    "http://192.168.1.1/hook",
    "http://169.254.169.254/latest/meta-data",
  ]) {
    it(`refuses ${webhook} without the opt-in`, async () => {
      const thread = await berth.client.threads.create();
      const response = await fetch(`${berth.url}/threads/${thread.thread_id}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "slow", input: { steps: 1, delay_ms: 1 }, webhook }),
      });
      assert.equal(response.status, 422);
      const body = (await response.json()) as { detail: { loc: string[]; msg: string }[] };
      assert.deepEqual(body.detail[0].loc, ["body", "webhook"]);
      assert.match(body.detail[0].msg, /private or loopback/);
      assert.deepEqual(await berth.client.runs.list(thread.thread_id), []);
    });
  }

  it("refuses at delivery a host name that resolves to a private address", { timeout: 30_000 }, async (t) => {
    // This machine's name is a host name (not checked at creation) that resolves locally, without a DNS server.
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    const loopback = (address: string) => address.startsWith("127.") || address === "::1";
    if (addresses.length === 0 || !addresses.every((entry) => loopback(entry.address))) {
      t.skip(`${name} does not resolve to loopback addresses only here`);
      return;
    }
    const receiver = new Receiver();
    await receiver.start();
    try {
      const thread = await berth.client.threads.create();
      const path = hook("rebound");
      const run = await berth.client.runs.create(thread.thread_id, "slow", {
        input: { steps: 1, delay_ms: 1 },
        webhook: `http://${name}:${receiver.port}${path}`,
      });
      const read = await deliveryWhen(berth, thread.thread_id, run.run_id, ended);
      assert.equal(read.status, "failed", "refused for good, not retried");
      assert.equal(read.attempts, 1);
      assert.equal(read.last_status, null);
      assert.match(String(read.last_error), /private or loopback/);
      assert.equal(receiver.to(path).length, 0, "nothing was sent");
    } finally {
      await receiver.stop();
    }
  });
});
