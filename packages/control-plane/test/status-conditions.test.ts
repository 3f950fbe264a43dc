// Status conditions and revision events (an extension of the spec): the
// conditions of revisions and deployments as a listener's moves, reports and
// events shape them. The test plays a `berth listener` over the listener
// protocol, so no build or server runs.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Condition, RevisionEvent } from "@berth/control-plane/wire";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  type ErrorBody,
  externalImageBody,
  type Listener,
  type Revision,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";

/** Each condition's type with its status and reason, e.g. {Serving: "True Serving"}. */
function summary(conditions: Condition[]): Record<string, string> {
  return Object.fromEntries(conditions.map((condition) => [condition.type, `${condition.status} ${condition.reason}`]));
}

describe("status conditions and revision events", () => {
  let cp: ControlPlane;
  let listener: Listener;

  before(async () => {
    cp = await startControlPlane();
    const created = await cp.admin.post<Listener>("/v2/listeners", { compute_type: "docker", compute_id: uniqueName("box") });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    listener = created.body;
  });
  after(() => cp.stop());

  const protocol = (path: string) => `/v2/listeners/${listener.id}${path}`;

  /** Moves a revision as a listener does, through every status up to DEPLOYED, reporting it serving. */
  async function deploy(deploymentId: string, revisionId: string): Promise<void> {
    const steps: [string[], string, string][] = [
      [["CREATING", "QUEUED", "AWAITING_BUILD"], "BUILDING", "Pulling the image"],
      [["BUILDING"], "AWAITING_DEPLOY", "Pulled"],
      [["AWAITING_DEPLOY"], "DEPLOYING", "Starting its servers"],
    ];
    for (const [from, to, message] of steps) {
      const moved = await cp.admin.post<{ transitioned: boolean }>(protocol(`/revisions/${revisionId}/transition`), {
        from,
        to,
        message,
      });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal(moved.body.transitioned, true, `${to}: ${JSON.stringify(moved.body)}`);
    }
    const deployed = await cp.admin.post<{ transitioned: boolean }>(protocol(`/revisions/${revisionId}/transition`), {
      from: ["DEPLOYING"],
      to: "DEPLOYED",
      message: "Serving",
      report: { status: "READY", active_revision_id: revisionId },
    });
    assert.equal(deployed.body.transitioned, true, JSON.stringify(deployed.body));
    const deployment = await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`);
    assert.equal(deployment.body.active_revision_id, revisionId);
  }

  async function newDeployment(): Promise<Deployment> {
    return createDeployment(cp.admin, externalImageBody(uniqueName("cond"), { source_config: { listener_id: listener.id } }));
  }

  const revision = async (deploymentId: string, revisionId: string) =>
    (await cp.admin.get<Revision>(`/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;

  test("a revision not yet deployed: Built Unknown, Serving False; its deployment awaits a first revision", async () => {
    const deployment = await newDeployment();
    assert.equal(deployment.status, "AWAITING_DATABASE");
    assert.deepEqual(summary(deployment.conditions), {
      Serving: "False AwaitingFirstRevision",
      Healthy: "Unknown NotServing",
    });
    const queued = await revision(deployment.id, deployment.latest_revision_id!);
    const conditions = summary(queued.conditions);
    assert.equal(conditions.Built, `Unknown ${queued.status === "QUEUED" ? "Queued" : "Creating"}`);
    assert.match(conditions.Serving!, /^False /);
    assert.equal(conditions.Replaced, "False NotReplaced");
  });

  test("after a deploy: Built, Serving and Healthy True, numbered with the revision; the deployment READY", async () => {
    const deployment = await newDeployment();
    const revisionId = deployment.latest_revision_id!;
    await deploy(deployment.id, revisionId);
    const deployed = await revision(deployment.id, revisionId);
    assert.equal(deployed.status, "DEPLOYED");
    assert.deepEqual(summary(deployed.conditions), {
      Built: "True Built",
      Serving: "True Serving",
      Healthy: "True HealthCheckPassed",
      Replaced: "False NotReplaced",
    });
    for (const condition of deployed.conditions) {
      assert.equal(condition.observed_generation, 1);
      assert.ok(!Number.isNaN(Date.parse(condition.last_transition_time)), condition.last_transition_time);
      assert.equal(typeof condition.message, "string");
    }
    const current = await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
    assert.equal(current.body.status, "READY");
    assert.deepEqual(summary(current.body.conditions), { Serving: "True Serving", Healthy: "True HealthCheckPassed" });
    assert.ok(current.body.conditions.every((condition) => condition.observed_generation === 1));
    const listed = await cp.admin.get<{ resources: Revision[] }>(`/v2/deployments/${deployment.id}/revisions`);
    assert.deepEqual(listed.body.resources[0]!.conditions, deployed.conditions);
  });

  test("a second revision deployed: the first keeps DEPLOYED, Replaced True and Serving False", async () => {
    const deployment = await newDeployment();
    const first = deployment.latest_revision_id!;
    await deploy(deployment.id, first);
    const servedSince = (await revision(deployment.id, first)).conditions.find((c) => c.type === "Serving")!;
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      source_revision_config: { image_uri: "registry.local/agent:2" },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const second = patched.body.latest_revision_id!;
    assert.notEqual(second, first);
    // While the second one builds, the first still serves; the deployment's conditions are of the latest revision.
    assert.equal(patched.body.status, "READY");
    assert.ok(patched.body.conditions.every((condition) => condition.observed_generation === 2));
    assert.equal(summary((await revision(deployment.id, first)).conditions).Serving, "True Serving");
    await deploy(deployment.id, second);

    const replaced = await revision(deployment.id, first);
    assert.equal(replaced.status, "DEPLOYED");
    assert.deepEqual(summary(replaced.conditions), {
      Built: "True Built",
      Serving: "False Replaced",
      Healthy: "Unknown NotServing",
      Replaced: "True Replaced",
    });
    const replacedCondition = replaced.conditions.find((c) => c.type === "Replaced")!;
    assert.match(replacedCondition.message, new RegExp(`revision 2 \\(${second}\\)`));
    assert.ok(replacedCondition.last_transition_time > servedSince.last_transition_time);
    assert.ok(replaced.conditions.every((condition) => condition.observed_generation === 1));
    assert.equal(summary((await revision(deployment.id, second)).conditions).Serving, "True Serving");
    const timeline = await cp.admin.get<{ resources: RevisionEvent[] }>(
      `/v2/deployments/${deployment.id}/revisions/${first}/events`,
    );
    const last = timeline.body.resources.at(-1)!;
    assert.deepEqual([last.type, last.reason, last.status], ["Normal", "Replaced", "DEPLOYED"]);
  });

  test("an event recorded by the listener joins the timeline; the status does not move", async () => {
    const deployment = await newDeployment();
    const revisionId = deployment.latest_revision_id!;
    await deploy(deployment.id, revisionId);
    const before = await revision(deployment.id, revisionId);
    const recorded = await cp.admin.post(protocol(`/revisions/${revisionId}/events`), {
      type: "Warning",
      reason: "ServerRestarted",
      message: "The server exited (code 1) and was restarted",
    });
    assert.equal(recorded.status, 204, JSON.stringify(recorded.body));
    const after = await revision(deployment.id, revisionId);
    assert.equal(after.status, "DEPLOYED");
    assert.equal(after.status_message, before.status_message);
    const timeline = await cp.admin.get<{ resources: RevisionEvent[] }>(
      `/v2/deployments/${deployment.id}/revisions/${revisionId}/events`,
    );
    assert.equal(timeline.status, 200);
    const events = timeline.body.resources;
    assert.deepEqual(
      events.map((event) => `${event.type} ${event.reason} ${event.status}`),
      [
        `Normal ${events[0]!.status === "QUEUED" ? "Queued" : "Creating"} ${events[0]!.status}`,
        "Normal Building BUILDING",
        "Normal AwaitingDeploy AWAITING_DEPLOY",
        "Normal Deploying DEPLOYING",
        "Normal Deployed DEPLOYED",
        "Warning ServerRestarted DEPLOYED",
      ],
    );
    assert.equal(events.at(-1)!.message, "The server exited (code 1) and was restarted");
    assert.ok(!Number.isNaN(Date.parse(events.at(-1)!.at)));
  });

  test("a report of what the listener observes: Healthy False makes the deployment UNKNOWN, then READY again", async () => {
    const deployment = await newDeployment();
    const revisionId = deployment.latest_revision_id!;
    await deploy(deployment.id, revisionId);
    const report = (observed: Record<string, unknown>) =>
      cp.admin.post(protocol(`/deployments/${deployment.id}/report`), { observed });
    const unhealthy = await report({
      serving_revision_id: revisionId,
      healthy: false,
      reason: "HealthCheckFailed",
      message: "GET /ok timed out",
    });
    assert.equal(unhealthy.status, 204, JSON.stringify(unhealthy.body));
    let current = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
    assert.equal(current.status, "UNKNOWN");
    assert.deepEqual(summary(current.conditions), { Serving: "True Serving", Healthy: "False HealthCheckFailed" });
    assert.equal(summary((await revision(deployment.id, revisionId)).conditions).Healthy, "False HealthCheckFailed");

    // A listener restarted and found nothing running: nothing serves.
    await report({ serving_revision_id: null, healthy: false, reason: "NotRunning", message: "No server runs" });
    current = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
    assert.equal(current.status, "UNKNOWN");
    assert.equal(summary(current.conditions).Serving, "False NotRunning");
    assert.equal(summary((await revision(deployment.id, revisionId)).conditions).Serving, "False NotRunning");

    await report({ serving_revision_id: revisionId, healthy: true, reason: "ServerRunning", message: "Restored" });
    current = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
    assert.equal(current.status, "READY");
    assert.deepEqual(summary(current.conditions), { Serving: "True Serving", Healthy: "True ServerRunning" });
  });

  test("the events route refuses what is not an event (422 JSON) and revisions not of the listener (404 JSON)", async () => {
    const deployment = await newDeployment();
    const revisionId = deployment.latest_revision_id!;
    const path = protocol(`/revisions/${revisionId}/events`);
    for (const body of [
      {},
      { type: "Error", reason: "ServerRestarted", message: "m" },
      { type: "Normal", reason: "not camel case", message: "m" },
      { type: "Normal", reason: "ServerRestarted" },
      { type: "Normal", reason: "ServerRestarted", message: "m", extra: true },
    ]) {
      const refused = await cp.admin.post<ErrorBody>(path, body);
      assert.equal(refused.status, 422, `${JSON.stringify(body)}: ${refused.status}`);
      assert.ok(refused.body && typeof refused.body === "object" && "detail" in refused.body, JSON.stringify(refused.body));
    }
    const badObserved = await cp.admin.post<ErrorBody>(protocol(`/deployments/${deployment.id}/report`), {
      observed: { serving_revision_id: revisionId, healthy: "yes", reason: "Fine", message: "" },
    });
    assert.equal(badObserved.status, 422, JSON.stringify(badObserved.body));

    // A revision of a deployment the embedded listener runs is not this listener's.
    const other = await createDeployment(cp.admin, externalImageBody(uniqueName("cond-embedded")));
    const notMine = await cp.admin.post<ErrorBody>(protocol(`/revisions/${other.latest_revision_id}/events`), {
      type: "Normal",
      reason: "ServerRestarted",
      message: "m",
    });
    assert.equal(notMine.status, 404, JSON.stringify(notMine.body));
    assert.ok("detail" in notMine.body);
    const unknown = await cp.admin.post<ErrorBody>(protocol("/revisions/00000000-0000-4000-8000-000000000000/events"), {
      type: "Normal",
      reason: "ServerRestarted",
      message: "m",
    });
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
  });

  test("/openapi.json describes the conditions and the events route", async () => {
    const spec = await cp.admin.get<{ paths: Record<string, unknown> }>("/openapi.json");
    assert.equal(spec.status, 200);
    assert.ok(Object.keys(spec.body.paths).some((path) => /\/v2\/listeners\/.+\/revisions\/.+\/events$/.test(path)));
    assert.match(JSON.stringify(spec.body), /last_transition_time/);
    assert.match(JSON.stringify(spec.body), /observed_generation/);
  });
});
