import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, startBerth } from "@berth/test-support";

interface Delivery {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/**
 * A local webhook receiver: records every request, answers with the status
 * `respond` picks, and lets tests await the n-th request to a path.
 */
class Receiver {
  readonly deliveries: Delivery[] = [];
  private waiters: { path: string; count: number; resolve: (deliveries: Delivery[]) => void }[] = [];
  private server!: Server;
  url = "";

  constructor(private readonly respond: (delivery: Delivery, nth: number) => number = () => 200) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const delivery: Delivery = {
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString() || "null"),
        };
        this.deliveries.push(delivery);
        const nth = this.to(delivery.path).length;
        res.writeHead(this.respond(delivery, nth), { "content-type": "text/plain" }).end("ok");
        this.notify();
      });
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  to(path: string): Delivery[] {
    return this.deliveries.filter((delivery) => delivery.path === path);
  }

  /** Resolves once `count` requests reached `path`. */
  waitFor(path: string, count = 1): Promise<Delivery[]> {
    return new Promise((resolve) => {
      this.waiters.push({ path, count, resolve });
      this.notify();
    });
  }

  private notify(): void {
    this.waiters = this.waiters.filter((waiter) => {
      const received = this.to(waiter.path);
      if (received.length < waiter.count) return true;
      waiter.resolve(received);
      return false;
    });
  }
}

describe("run webhooks", () => {
  let berth: BerthProcess;
  const receiver = new Receiver((delivery, nth) => (delivery.path.startsWith("/flaky") && nth === 1 ? 500 : 200));

  before(async () => {
    await receiver.start();
    berth = await startBerth();
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
    assert.match(JSON.stringify(delivery.body.error), /CustomError/);
    assert.match(JSON.stringify(delivery.body.error), /Boom: webhook/);
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

  it("retries a delivery the receiver answered with 500", { timeout: 15_000 }, async () => {
    const path = hook("flaky");
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "slow", {
      input: { steps: 1, delay_ms: 10 },
      webhook: `${receiver.url}${path}`,
    });
    const [failed, retried] = await receiver.waitFor(path, 2);
    assert.deepEqual(retried.body, failed.body, "the same payload again");
    assert.equal(retried.body.run_id, run.run_id);
    assert.equal(retried.body.status, "success");
    assert.deepEqual(retried.body.values, { steps: 1, delay_ms: 10, done: 1 });
    assert.equal((await berth.client.runs.get(thread.thread_id, run.run_id)).status, "success", "delivery never affects the run");
  });
});
