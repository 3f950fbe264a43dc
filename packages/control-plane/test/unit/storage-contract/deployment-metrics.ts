// Deployments' metric samples: kept as given (the runs' JSON too), read back
// from a time on, oldest first, pruned by age, and purged with their deployment.
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { MetricSample } from "@berth/listener-protocol";
import type { ControlPlaneStorage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { created, newTenant, tick } from "./fixtures.js";

function sample(deploymentId: string, replica: string, timestamp: string, withRuns = true): MetricSample {
  return {
    deployment_id: deploymentId,
    replica,
    timestamp,
    interval_seconds: 15.5,
    cpu_seconds: 0.25,
    memory_bytes: 5_000_000_000,
    pending_runs: 3,
    running_runs: 1,
    runs: withRuns
      ? {
          finished: { success: 2, error: 1, timeout: 0, interrupted: 0 },
          duration_ms: { le: [50, 100], counts: [1, 3], count: 3, sum: 180.5 },
        }
      : null,
  };
}

export function deploymentMetricsContract(backend: Backend): void {
  describe("deployment metric samples", () => {
    const db = databasePerTest(backend);
    let a: ControlPlaneStorage;
    let b: ControlPlaneStorage;

    beforeEach(() => {
      ({ a, b } = db);
    });

    it("keeps samples as given, reads them from a time on, prunes old ones, and purges them with the deployment", async () => {
      const t = await newTenant(a);
      const id = (await created(a, t, "metered")).deployment.id;
      const other = (await created(a, t, "other")).deployment.id;
      const [old, first, second] = [tick(), tick(), tick()];
      await a.deploymentMetrics.append([]);
      await a.deploymentMetrics.append([
        sample(id, "replica-2", second, false),
        sample(id, "replica-1", old),
        sample(id, "replica-1", first),
        sample(other, "replica-1", first),
      ]);
      assert.deepEqual(await b.deploymentMetrics.since(id, first), [
        sample(id, "replica-1", first),
        sample(id, "replica-2", second, false),
      ]);
      assert.equal((await b.deploymentMetrics.since(id, old)).length, 3);

      assert.equal(await b.deploymentMetrics.prune(first), 1);
      assert.equal((await a.deploymentMetrics.since(id, old)).length, 2);

      await a.deployments.markDeleted(t, [id], false, tick());
      await a.deployments.purge(id);
      assert.deepEqual(await b.deploymentMetrics.since(id, old), []);
      assert.equal((await b.deploymentMetrics.since(other, old)).length, 1, "another deployment's stay");
    });
  });
}
