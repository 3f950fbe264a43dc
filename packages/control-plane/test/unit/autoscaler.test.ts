import assert from "node:assert/strict";
import { test } from "node:test";
import { autoscaleSettings, wantedReplicas } from "../../src/listener/autoscaler.js";

test("the replicas the load asks for: one per `target` requests in flight, within min_scale and max_scale", () => {
  const bounds = { min: 2, max: 5 };
  assert.equal(wantedReplicas(0, 10, bounds), 2);
  assert.equal(wantedReplicas(20, 10, bounds), 2);
  assert.equal(wantedReplicas(21, 10, bounds), 3);
  assert.equal(wantedReplicas(49, 10, bounds), 5);
  assert.equal(wantedReplicas(500, 10, bounds), 5);
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
