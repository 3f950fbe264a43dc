import assert from "node:assert/strict";
import { test } from "node:test";
import type { Logger } from "@berth/service-kit";
import {
  Autoscaler,
  type DimensionState,
  nextSize,
  type Scalable,
  type ScaleDimension,
  wantedReplicas,
  wantedWorkers,
} from "../../src/listener/autoscaler.js";
import type { QueueDepth } from "../../src/listener/queue-metrics.js";
import { autoscaleSettings } from "../../src/listener/settings.js";

test("the replicas the load asks for: one per `target` requests in flight, within min_scale and max_scale", () => {
  const bounds = { min: 2, max: 5 };
  assert.equal(wantedReplicas(0, 10, bounds), 2);
  assert.equal(wantedReplicas(20, 10, bounds), 2);
  assert.equal(wantedReplicas(21, 10, bounds), 3);
  assert.equal(wantedReplicas(49, 10, bounds), 5);
  assert.equal(wantedReplicas(500, 10, bounds), 5);
});

test("the workers the queue asks for: one per `slots` pending and running runs, within queue_min_scale and queue_max_scale", () => {
  const bounds = { min: 1, max: 4 };
  assert.equal(wantedWorkers({ pending: 0, running: 0 }, 10, bounds), 1);
  assert.equal(wantedWorkers({ pending: 0, running: 10 }, 10, bounds), 1);
  assert.equal(wantedWorkers({ pending: 1, running: 10 }, 10, bounds), 2, "a pending run beyond the slots asks for another");
  assert.equal(wantedWorkers({ pending: 25, running: 0 }, 10, bounds), 3);
  assert.equal(wantedWorkers({ pending: 7, running: 2 }, 3, bounds), 3);
  assert.equal(wantedWorkers({ pending: 1000, running: 40 }, 10, bounds), 4);
});

test("the next size: up at once, down by one only after the quiet period", () => {
  assert.deepEqual(nextSize(1, 3, undefined, 1000, 60_000), { target: 3, lowSince: undefined });
  assert.deepEqual(nextSize(3, 3, 500, 1000, 60_000), { target: 3, lowSince: undefined }, "a load back up forgets the low");
  assert.deepEqual(nextSize(3, 1, undefined, 1000, 60_000), { target: 3, lowSince: 1000 });
  assert.deepEqual(nextSize(3, 1, 1000, 60_999, 60_000), { target: 3, lowSince: 1000 });
  assert.deepEqual(nextSize(3, 1, 1000, 61_000, 60_000), { target: 2, lowSince: undefined }, "one at a time");
  assert.deepEqual(nextSize(3, 1, undefined, 1000, 0), { target: 2, lowSince: undefined });
});

test("autoscale settings come from BERTH_AUTOSCALE_*, with defaults, and bad values are refused by name", () => {
  assert.deepEqual(autoscaleSettings({}), { intervalMs: 5000, targetOpenRequests: 10, scaleDownAfterMs: 60_000 });
  assert.deepEqual(
    autoscaleSettings({
      BERTH_AUTOSCALE_INTERVAL_SECONDS: "0.5",
      BERTH_AUTOSCALE_TARGET_REQUESTS: "3",
      BERTH_AUTOSCALE_SCALE_DOWN_SECONDS: "0",
    }),
    { intervalMs: 500, targetOpenRequests: 3, scaleDownAfterMs: 0 },
  );
  assert.throws(() => autoscaleSettings({ BERTH_AUTOSCALE_TARGET_REQUESTS: "0" }), /BERTH_AUTOSCALE_TARGET_REQUESTS/);
});

/** A scale-out deployment whose sizes, load and queue the test sets; it records every resize. */
class FakeDeployment implements Scalable {
  readonly deploymentId = "d-1";
  replicas: DimensionState = { count: 1, bounds: { min: 1, max: 1 } };
  workers: DimensionState = { count: 1, bounds: { min: 1, max: 4 } };
  open = 0;
  queue: QueueDepth | Error = { pending: 0, running: 0 };
  readonly steps: { dimension: ScaleDimension; from: number; to: number; reason: string }[] = [];

  scaling() {
    return { replicas: this.replicas, workers: { ...this.workers, slotsPerWorker: 10 } };
  }

  openRequests(): number {
    return this.open;
  }

  async queueDepth(): Promise<QueueDepth> {
    if (this.queue instanceof Error) throw this.queue;
    return this.queue;
  }

  async scaleTo(dimension: ScaleDimension, count: number, reason: string): Promise<void> {
    const state = dimension === "replicas" ? this.replicas : this.workers;
    this.steps.push({ dimension, from: state.count, to: count, reason });
    state.count = count;
  }
}

function autoscalerOf(deployment: FakeDeployment, warnings: string[]): Autoscaler {
  const logger = { warn: (_context: object, message: string) => warnings.push(message) } as unknown as Logger;
  return new Autoscaler({ intervalMs: 1000, targetOpenRequests: 10, scaleDownAfterMs: 60_000 }, () => [deployment], logger);
}

test("workers grow at once to what the queue asks for, and shrink one at a time after the quiet period", async () => {
  const deployment = new FakeDeployment();
  const warnings: string[] = [];
  const autoscaler = autoscalerOf(deployment, warnings);

  deployment.queue = { pending: 25, running: 10 };
  await autoscaler.tick(0);
  assert.deepEqual(deployment.steps, [
    { dimension: "workers", from: 1, to: 4, reason: "25 runs pending and 10 running for 1 workers (10 per worker)" },
  ]);

  deployment.queue = { pending: 0, running: 3 };
  await autoscaler.tick(1_000);
  await autoscaler.tick(60_999);
  assert.equal(deployment.steps.length, 1, "no shrink before the quiet period");
  await autoscaler.tick(61_000);
  assert.deepEqual(deployment.steps.at(-1), {
    dimension: "workers",
    from: 4,
    to: 3,
    reason: "0 runs pending and 3 running for 4 workers (10 per worker)",
  });
  await autoscaler.tick(62_000);
  assert.equal(deployment.steps.length, 2, "the next step waits for another quiet period");
  await autoscaler.tick(122_000);
  assert.equal(deployment.workers.count, 2);
  assert.deepEqual(warnings, []);
  assert.ok(
    deployment.steps.every((step) => step.dimension === "workers"),
    "replicas whose bounds are equal never scale",
  );
});

test("a failed queue read changes nothing and is logged; replicas still scale by the router's load", async () => {
  const deployment = new FakeDeployment();
  deployment.replicas = { count: 1, bounds: { min: 1, max: 3 } };
  deployment.workers = { count: 3, bounds: { min: 1, max: 4 } };
  const warnings: string[] = [];
  const autoscaler = autoscalerOf(deployment, warnings);

  // A low queue starts the quiet period; the failed reads that follow neither shrink nor reset it.
  await autoscaler.tick(0);
  deployment.queue = new Error("GET /metrics answered 503");
  deployment.open = 25;
  await autoscaler.tick(30_000);
  assert.deepEqual(
    deployment.steps.map(({ dimension, from, to }) => ({ dimension, from, to })),
    [{ dimension: "replicas", from: 1, to: 3 }],
  );
  assert.equal(deployment.workers.count, 3);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /reading a deployment's load failed/);
  await autoscaler.tick(70_000);
  assert.equal(deployment.workers.count, 3, "no shrink without a reading");

  deployment.queue = { pending: 0, running: 0 };
  await autoscaler.tick(71_000);
  assert.equal(deployment.workers.count, 2, "the low load seen before the failures counts toward the quiet period");
});

test("workers with queue_max_scale at queue_min_scale are never measured", async () => {
  const deployment = new FakeDeployment();
  deployment.workers = { count: 2, bounds: { min: 2, max: 2 } };
  deployment.queue = new Error("must not be read");
  const warnings: string[] = [];
  await autoscalerOf(deployment, warnings).tick(0);
  assert.deepEqual(deployment.steps, []);
  assert.deepEqual(warnings, []);
});
