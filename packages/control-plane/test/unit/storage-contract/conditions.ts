// Status conditions as the services record them (the store keeps what it is
// given), the listener's last observation, and events recorded in a
// revision's timeline without a move.
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { Condition, ObservedDeployment } from "@berth/listener-protocol";
import type { ControlPlaneStorage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { created, newTenant, tick } from "./fixtures.js";

function condition(type: string, status: Condition["status"], reason: string, generation = 1): Condition {
  return { type, status, reason, message: `${type} is ${status}`, last_transition_time: tick(), observed_generation: generation };
}

const OBSERVED: ObservedDeployment = { serving_revision_id: null, healthy: false, reason: "NotRunning", message: "nothing" };

export function conditionsContract(backend: Backend): void {
  describe("status conditions and recorded events", () => {
    const db = databasePerTest(backend);
    let a: ControlPlaneStorage;
    let b: ControlPlaneStorage;

    beforeEach(() => {
      ({ a, b } = db);
    });

    it("records conditions of a deployment and its revisions, with the status derived from them", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "conditions");
      const deploymentId = made.deployment.id;
      const revisionId = made.revision.id;
      assert.deepEqual(await b.conditions.conditionsOf([deploymentId, revisionId]), new Map());
      assert.deepEqual(await b.conditions.conditionsOf([]), new Map());
      assert.equal((await b.conditions.observedOf([deploymentId])).get(deploymentId) ?? null, null);

      const ofDeployment = [condition("Serving", "True", "Serving"), condition("Healthy", "False", "HealthCheckFailed")];
      const ofRevision = [condition("Built", "True", "Built"), condition("Serving", "True", "Serving")];
      const observed = { ...OBSERVED, serving_revision_id: revisionId };
      await a.conditions.record(deploymentId, {
        status: "UNKNOWN",
        conditions: ofDeployment,
        observed,
        revisions: [{ id: revisionId, conditions: ofRevision }],
      });
      const stored = await b.conditions.conditionsOf([deploymentId, revisionId, "missing"]);
      assert.deepEqual(
        stored,
        new Map([
          [deploymentId, ofDeployment],
          [revisionId, ofRevision],
        ]),
      );
      // Keys in the documented order, whatever order the backend keeps.
      assert.deepEqual(Object.keys(stored.get(revisionId)![0]!), Object.keys(ofRevision[0]!));
      assert.deepEqual((await b.conditions.observedOf([deploymentId])).get(deploymentId) ?? null, observed);
      assert.deepEqual(
        Object.keys(((await b.conditions.observedOf([deploymentId])).get(deploymentId) ?? null)!),
        Object.keys(observed),
      );
      assert.equal((await b.deployments.getAny(deploymentId))?.status, "UNKNOWN");

      // Without `observed`, the last observation stays; null clears it. Recorded conditions are replaced whole.
      const ready = [condition("Serving", "True", "Serving", 2)];
      await b.conditions.record(deploymentId, { status: "READY", conditions: ready, revisions: [] });
      assert.deepEqual((await a.conditions.observedOf([deploymentId])).get(deploymentId) ?? null, observed);
      assert.deepEqual((await a.conditions.conditionsOf([deploymentId])).get(deploymentId), ready);
      assert.deepEqual((await a.conditions.conditionsOf([revisionId])).get(revisionId), ofRevision);
      assert.equal((await a.deployments.getAny(deploymentId))?.status, "READY");
      await b.conditions.record(deploymentId, { status: "READY", conditions: ready, observed: null, revisions: [] });
      assert.equal((await a.conditions.observedOf([deploymentId])).get(deploymentId) ?? null, null);

      // A deleted deployment keeps AWAITING_DELETE; its conditions go with its purge.
      await a.deployments.markDeleted(t, [deploymentId], false, tick());
      await b.conditions.record(deploymentId, { status: "READY", conditions: ready, observed, revisions: [] });
      assert.equal((await a.deployments.getAny(deploymentId))?.status, "AWAITING_DELETE");
      await a.deployments.purge(deploymentId);
      assert.deepEqual(await b.conditions.conditionsOf([deploymentId, revisionId]), new Map());
      assert.equal((await b.conditions.observedOf([deploymentId])).get(deploymentId) ?? null, null);
    });

    it("records an event in a revision's timeline with its status unmoved; moves have no type or reason", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "events");
      const id = made.revision.id;
      const moved = await a.revisions.transition(id, ["QUEUED"], "DEPLOYED", "Serving", tick());
      const at = tick();
      const event = { type: "Warning" as const, reason: "ServerRestarted", message: "exited, restarted" };
      assert.equal(await b.revisions.recordEvent(id, event, at), true);
      assert.deepEqual(await a.revisions.getAny(id), moved, "the revision is as it was");
      assert.equal(await b.revisions.recordEvent("missing", event, at), false);
      const events = await a.revisions.events(id);
      assert.deepEqual(
        events.map(({ at, status, message, type, reason }) => ({ at, status, message, type, reason })),
        [
          { at: made.revision.created_at, status: "QUEUED", message: "", type: null, reason: null },
          { at: moved!.updated_at, status: "DEPLOYED", message: "Serving", type: null, reason: null },
          { at, status: "DEPLOYED", ...event },
        ],
      );
      assert.ok(events[1]!.id < events[2]!.id);

      // With a status message, the revision's message (and updated_at) change too; its status does not.
      const later = tick();
      const replaced = { type: "Normal" as const, reason: "Replaced", message: "Replaced by revision 2" };
      assert.equal(await b.revisions.recordEvent(id, replaced, later, replaced.message), true);
      assert.deepEqual(await a.revisions.getAny(id), {
        ...moved,
        status_message: "Replaced by revision 2",
        updated_at: later,
      });
      assert.equal((await a.revisions.events(id)).at(-1)?.reason, "Replaced");
    });
  });
}
