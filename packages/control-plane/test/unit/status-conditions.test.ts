// The derivation of status conditions (src/domain/status-conditions.ts), on
// the cases the black-box test cannot reach quickly: failures, stickiness of
// Built and NoRevisionServing, transition times, old listeners' reports.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Condition } from "@berth/listener-protocol";
import {
  deploymentConditions,
  deploymentStatusOf,
  moveEventOf,
  observationOf,
  type RevisionState,
  revisionConditions,
  type ServingState,
} from "../../src/domain/status-conditions.js";

const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-01-01T00:01:00.000Z";
const NOTHING_SERVES: ServingState = { active_revision_id: null, active_number: null, observed: null };

const summary = (conditions: Condition[]) =>
  Object.fromEntries(conditions.map((condition) => [condition.type, `${condition.status} ${condition.reason}`]));

const revision = (status: RevisionState["status"], number = 1): RevisionState => ({
  id: `r${number}`,
  number,
  status,
  status_message: `${status} because`,
});

test("a move's timeline entry: its status in CamelCase, a Warning when it failed", () => {
  assert.deepEqual(moveEventOf("AWAITING_DEPLOY"), { type: "Normal", reason: "AwaitingDeploy" });
  assert.deepEqual(moveEventOf("BUILD_FAILED"), { type: "Warning", reason: "BuildFailed" });
  assert.deepEqual(moveEventOf("INTERRUPTED"), { type: "Normal", reason: "Interrupted" });
});

test("a failed build: Built False with the status message; Serving False with the failure", () => {
  const conditions = revisionConditions(revision("BUILD_FAILED"), NOTHING_SERVES, [], T0);
  assert.deepEqual(summary(conditions), {
    Built: "False BuildFailed",
    Serving: "False BuildFailed",
    Healthy: "Unknown NotServing",
    Replaced: "False NotReplaced",
  });
  assert.equal(conditions[0]?.message, "BUILD_FAILED because");
  assert.ok(conditions.every((condition) => condition.last_transition_time === T0 && condition.observed_generation === 1));
});

test("Built stays True once it was, though the revision then ends INTERRUPTED", () => {
  const deploying = revisionConditions(revision("DEPLOYING"), NOTHING_SERVES, [], T0);
  const interrupted = revisionConditions(revision("INTERRUPTED"), NOTHING_SERVES, deploying, T1);
  assert.equal(summary(interrupted).Built, "True Built");
  assert.equal(interrupted.find((condition) => condition.type === "Built")?.last_transition_time, T0);
  assert.equal(interrupted.find((condition) => condition.type === "Serving")?.last_transition_time, T0, "still False");
});

test("a condition keeps its transition time while its status holds, and takes `now` when it changes", () => {
  const serving: ServingState = { active_revision_id: "r1", active_number: 1, observed: null };
  const first = revisionConditions(revision("DEPLOYED"), serving, [], T0);
  const unhealthy = revisionConditions(
    revision("DEPLOYED"),
    { ...serving, observed: { serving_revision_id: "r1", healthy: false, reason: "HealthCheckFailed", message: "timeout" } },
    first,
    T1,
  );
  const healthy = unhealthy.find((condition) => condition.type === "Healthy");
  assert.deepEqual([healthy?.status, healthy?.reason, healthy?.last_transition_time], ["False", "HealthCheckFailed", T1]);
  assert.equal(unhealthy.find((condition) => condition.type === "Serving")?.last_transition_time, T0);
});

test("a deployment: awaiting its first revision, unused once the latest ended, and unused still while another builds", () => {
  const awaiting = deploymentConditions({ number: 1, status: "BUILDING" }, NOTHING_SERVES, [], T0);
  assert.equal(deploymentStatusOf(awaiting), "AWAITING_DATABASE");
  const failed = deploymentConditions({ number: 1, status: "BUILD_FAILED" }, NOTHING_SERVES, awaiting, T1);
  assert.equal(deploymentStatusOf(failed), "UNUSED");
  const retrying = deploymentConditions({ number: 2, status: "BUILDING" }, NOTHING_SERVES, failed, T1);
  assert.equal(deploymentStatusOf(retrying), "UNUSED");
  assert.ok(retrying.every((condition) => condition.observed_generation === 2));
});

test("a report without `observed` is read as an older listener meant it", () => {
  assert.equal(
    observationOf({ status: "READY", active_revision_id: "r2" }, "r1"),
    null,
    "a new revision: its health check passed",
  );
  assert.deepEqual(observationOf({ status: "UNKNOWN" }, "r1"), {
    serving_revision_id: "r1",
    healthy: false,
    reason: "Unhealthy",
    message: "Its servers stopped answering",
  });
  assert.equal(observationOf({ status: "READY" }, "r1")?.healthy, true);
  assert.equal(observationOf({ status: "UNUSED" }, null), undefined);
  const observed = { serving_revision_id: null, healthy: false, reason: "NotRunning", message: "none" };
  assert.equal(observationOf({ status: "READY", observed }, "r1"), observed);
});
