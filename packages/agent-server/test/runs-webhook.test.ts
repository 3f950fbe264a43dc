import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";
import { Receiver } from "./helpers/webhook-receiver.js";

describe("run webhooks", () => {
  let berth: BerthProcess;
  const receiver = new Receiver((delivery, nth) => (delivery.path.startsWith("/flaky") && nth === 1 ? 500 : 200));

  before(async () => {
    await receiver.start();
    // The receiver listens on loopback: private targets are opted in (berth dev allows them anyway).
    berth = await startBerth({ env: { BERTH_WEBHOOK_ALLOW_PRIVATE: "1" } });
  });
  after(async () => {
    await berth.stop();
    await receiver.stop();
  });

  const hook = (name: string) => `/${name}/${crypto.randomUUID()}`;

  it("POSTs the final run record to the webhook when a run succeeds", { timeout: 15_000 }, async () => {
    const path = hook("ok");
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "slow", {
      input: { steps: 2, delay_ms: 10 },
      webhook: `${receiver.url}${path}`,
      metadata: { origin: "webhook-test" },
    });
    const [delivery] = await receiver.waitFor(path);
    assert.equal(delivery.method, "POST");
    assert.match(String(delivery.headers["content-type"]), /^application\/json/);
    assert.equal(delivery.body.run_id, run.run_id);
    assert.equal(delivery.body.thread_id, thread.thread_id);
    assert.equal(delivery.body.assistant_id, run.assistant_id);
    assert.equal(delivery.body.status, "success");
    assert.deepEqual(delivery.body.values, { steps: 2, delay_ms: 10, done: 2 });
    assert.deepEqual(delivery.body.metadata, { origin: "webhook-test" });
    assert.equal((delivery.body.kwargs as { webhook: string }).webhook, `${receiver.url}${path}`);
    assert.equal((await berth.client.runs.get(thread.thread_id, run.run_id)).status, "success");
    assert.equal(receiver.to(path).length, 1, "delivered once");
  });

  it("delivers status error with the error when the run fails", { timeout: 15_000 }, async () => {
    const path = hook("failed");
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "failing", {
      input: { reason: "webhook" },
      webhook: `${receiver.url}${path}`,
    });
    const [delivery] = await receiver.waitFor(path);
    assert.equal(delivery.body.run_id, run.run_id);
    assert.equal(delivery.body.status, "error");
    assert.ok(delivery.body.error, "the payload carries the error");
    // As the official server sends it: the error's message.
    assert.equal(typeof delivery.body.error, "string");
    assert.match(String(delivery.body.error), /Boom: webhook/);
    assert.equal((await berth.client.runs.get(thread.thread_id, run.run_id)).status, "error");
  });

  it("delivers for a stateless run too", { timeout: 15_000 }, async () => {
    const path = hook("stateless");
    const run = await berth.client.runs.create(null, "slow", {
      input: { steps: 1, delay_ms: 10 },
      webhook: `${receiver.url}${path}`,
    });
    const [delivery] = await receiver.waitFor(path);
    assert.equal(delivery.body.run_id, run.run_id);
    assert.equal(delivery.body.status, "success");
    assert.deepEqual(delivery.body.values, { steps: 1, delay_ms: 10, done: 1 });
  });

  it("refuses a webhook path when the project has no http.app to deliver it to", async () => {
    const response = await request(berth.url, "POST", "/runs", {
      assistant_id: "slow",
      input: { steps: 1 },
      webhook: "/custom/webhook",
    });
    assert.equal(response.status, 422);
    const detail = (response.body as { detail: { loc: string[]; msg: string }[] }).detail;
    assert.deepEqual(detail[0]?.loc, ["body", "webhook"]);
    assert.match(detail[0]?.msg ?? "", /http\.app/);
  });

  it("retries a delivery the receiver answered with 500", { timeout: 15_000 }, async () => {
    const path = hook("flaky");
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "slow", {
      input: { steps: 1, delay_ms: 10 },
      webhook: `${receiver.url}${path}`,
    });
    const [failed, retried] = await receiver.waitFor(path, 2);
    const { webhook_sent_at: _first, ...firstBody } = failed.body;
    const { webhook_sent_at: _second, ...retriedBody } = retried.body;
    assert.deepEqual(retriedBody, firstBody, "the same payload again, but for when it was sent");
    assert.equal(retried.body.run_id, run.run_id);
    assert.equal(retried.body.status, "success");
    assert.deepEqual(retried.body.values, { steps: 1, delay_ms: 10, done: 1 });
    assert.equal((await berth.client.runs.get(thread.thread_id, run.run_id)).status, "success", "delivery never affects the run");
  });
});
