// A deployment's tracing key (its processes' LANGSMITH_API_KEY) reaches its own deployment's project only: two
// deployments of one workspace, their keys as the control plane hands them to their listener, the real langsmith
// client. Deployment A's key traces and reads its own project; B's project, runs and feedback are unknown to it (404)
// and it cannot write into them (403); the workspace's own key still reads both.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { RunTree } from "langsmith";
import { type Api, api, type ControlPlane, type ErrorBody, startControlPlane, uniqueName } from "@berth/test-support";
import { type DeploymentKeys, deploymentsWithKeys } from "./helpers/deployment-keys.js";
import {
  expectStatus,
  listRuns,
  multipartBody,
  postMultipart,
  runFeedback,
  runTree,
  type TracedRun,
  type TracingProject,
  tracingClient,
} from "./helpers/tracing.js";

describe("tracing: a deployment's key reaches its own project only", () => {
  let cp: ControlPlane;
  let workspace: Api;
  let a: DeploymentKeys;
  let b: DeploymentKeys;
  /** A's and B's tracing keys on the plain API. */
  let asA: Api;
  let asB: Api;
  let runA: RunTree;
  let runB: RunTree;
  let projectB: TracingProject;

  /** A root run with one child, traced with the real client into `project`, and feedback on the root. */
  async function trace(key: string, project: string, secret: string): Promise<RunTree> {
    const client = tracingClient(cp.url, key);
    const root = new RunTree({ name: `${project}-agent`, run_type: "chain", inputs: { secret }, project_name: project, client });
    await root.postRun();
    const child = root.createChild({ name: "llm", run_type: "llm", inputs: { prompt: secret } });
    await child.postRun();
    await child.end({ answer: "fine" });
    await child.patchRun();
    await root.end({ done: true });
    await root.patchRun();
    await client.createFeedback(root.id, "quality", { score: 1 });
    await client.awaitPendingTraceBatches();
    return root;
  }

  before(async () => {
    cp = await startControlPlane();
    const tenant = await cp.createTenant(uniqueName("traces"));
    workspace = api(cp.url, (await cp.createKey({ tenants: [tenant.id] })).key);
    [a, b] = await deploymentsWithKeys(workspace, [uniqueName("agent-a"), uniqueName("agent-b")]);
    asA = api(cp.url, a!.tracingKey);
    asB = api(cp.url, b!.tracingKey);
    assert.equal(a!.tracingProject, a!.deployment.name);
    runA = await trace(a!.tracingKey, a!.tracingProject, "a-secret");
    runB = await trace(b!.tracingKey, b!.tracingProject, "b-secret");
    projectB = expectStatus(await workspace.get<TracingProject>(`/api/v1/projects/${b!.tracingProject}`), 200);
  });
  after(() => cp?.stop());

  /** A 404 whose detail reads like the one for an id that never existed. */
  async function assertUnknownToA(path: string, id: string) {
    const foreign = await asA.get(path);
    assert.equal(foreign.status, 404, `${path}: ${JSON.stringify(foreign.body)}`);
    const missing = randomUUID();
    const unknown = await asA.get(path.replace(id, missing));
    assert.equal(unknown.status, 404);
    const detail = (body: unknown, value: string) => String((body as ErrorBody).detail).replaceAll(value, "<id>");
    assert.equal(detail(foreign.body, id), detail(unknown.body, missing));
  }

  test("each key traces into and reads its own project, the workspace's key reads both", async () => {
    const ownTree = await runTree(asA, runA.id);
    assert.deepEqual(ownTree.inputs, { secret: "a-secret" });
    assert.equal(ownTree.child_runs.length, 1);
    assert.deepEqual(
      (await listRuns(asA, a.tracingProject, "?root_only=true")).map((run) => run.id),
      [runA.id],
    );
    assert.deepEqual(
      (await runFeedback(asA, runA.id)).map((feedback) => feedback.key),
      ["quality"],
    );
    expectStatus(await asA.get(`/api/v1/projects/${a.tracingProject}`), 200);
    expectStatus(await asB.get(`/api/v1/runs/${runB.id}`), 200);
    assert.deepEqual((await runTree(workspace, runA.id)).inputs, { secret: "a-secret" });
    assert.deepEqual((await runTree(workspace, runB.id)).inputs, { secret: "b-secret" });
  });

  test("B's project, runs, trees, feedback and thread usage are 404 for A's key, as unknown ones", async () => {
    await assertUnknownToA(`/api/v1/runs/${runB.id}`, runB.id);
    await assertUnknownToA(`/api/v1/runs/${runB.id}/tree`, runB.id);
    await assertUnknownToA(`/api/v1/runs/${runB.id}/spans`, runB.id);
    await assertUnknownToA(`/api/v1/runs/${runB.id}/feedback`, runB.id);
    await assertUnknownToA(`/api/v1/projects/${projectB.id}`, projectB.id);
    await assertUnknownToA(`/api/v1/projects/${projectB.id}/runs`, projectB.id);
    await assertUnknownToA(`/api/v1/projects/${projectB.id}/threads/t-1/usage`, projectB.id);
    await assertUnknownToA(`/api/v1/projects/${b.tracingProject}/runs`, b.tracingProject);
    const child = (await runTree(workspace, runB.id)).child_runs[0]!;
    await assertUnknownToA(`/api/v1/runs/${child.id}`, child.id);
    await assertUnknownToA(`/api/v1/runs/${child.id}/spans`, child.id);
  });

  test("A's key cannot write into B's project or runs, nor open projects of its own choosing", async () => {
    // Into B's project, by name (the real client) and by id.
    const intoB = await asA.post("/api/v1/runs", {
      id: randomUUID(),
      name: "x",
      run_type: "chain",
      session_name: b.tracingProject,
    });
    assert.equal(intoB.status, 403, JSON.stringify(intoB.body));
    const byId = await asA.post("/api/v1/runs", { id: randomUUID(), name: "x", run_type: "chain", session_id: projectB.id });
    assert.equal(byId.status, 404, JSON.stringify(byId.body));
    for (const name of ["default", uniqueName("elsewhere")]) {
      const other = await asA.post("/api/v1/runs", { id: randomUUID(), name: "x", run_type: "chain", session_name: name });
      assert.equal(other.status, 403, `${name}: ${JSON.stringify(other.body)}`);
    }

    // B's run, patched or posted again under A's project, from every ingestion route.
    const patched = await asA.patch(`/api/v1/runs/${runB.id}`, { outputs: { stolen: true }, error: "x" });
    assert.equal(patched.status, 403, JSON.stringify(patched.body));
    const reposted = await asA.post("/api/v1/runs/batch", {
      post: [{ id: runB.id, trace_id: runB.id, name: "hijacked", run_type: "chain", session_name: a.tracingProject }],
    });
    assert.equal(reposted.status, 403, JSON.stringify(reposted.body));
    const multipart = await postMultipart(
      cp.url,
      a.tracingKey,
      multipartBody([{ name: `patch.${runB.id}`, value: { id: runB.id, trace_id: runB.id, outputs: { stolen: true } } }]),
    );
    assert.equal(multipart.status, 403, JSON.stringify(multipart.body));

    // Feedback on B's run: direct, batched, or through a pre-signed URL.
    const feedback = await asA.post("/api/v1/feedback", { run_id: runB.id, key: "a-says", score: 0 });
    assert.equal(feedback.status, 403, JSON.stringify(feedback.body));
    const batched = await postMultipart(
      cp.url,
      a.tracingKey,
      multipartBody([{ name: `feedback.${randomUUID()}`, value: { run_id: runB.id, key: "a-batched", score: 0 } }]),
    );
    assert.equal(batched.status, 403, JSON.stringify(batched.body));
    const token = await asA.post("/api/v1/feedback/tokens", { run_id: runB.id, feedback_key: "a-token" });
    assert.equal(token.status, 403, JSON.stringify(token.body));

    const stillB = expectStatus(await workspace.get<TracedRun>(`/api/v1/runs/${runB.id}`), 200);
    assert.equal(stillB.name, `${b.tracingProject}-agent`);
    assert.deepEqual(stillB.outputs, { done: true });
    assert.equal(stillB.error, null);
    assert.equal(stillB.project_id, projectB.id);
    assert.deepEqual(
      (await runFeedback(workspace, runB.id)).map((given) => given.key),
      ["quality"],
    );
  });

  test("A's runs naming B's run as parent or trace stay out of B's tree", async () => {
    const underB = randomUUID();
    const intoTrace = randomUUID();
    const sent = await asA.post("/api/v1/runs/batch", {
      post: [
        { id: underB, parent_run_id: runB.id, name: "graft", run_type: "chain", session_name: a.tracingProject },
        { id: intoTrace, trace_id: runB.id, parent_run_id: runB.id, name: "graft", run_type: "chain" },
      ],
    });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const treeB = await runTree(workspace, runB.id);
    assert.deepEqual(
      treeB.child_runs.map((run) => run.name),
      ["llm"],
    );
    // A run naming no project goes to the key's own project.
    const ownProject = expectStatus(await asA.get<TracedRun>(`/api/v1/runs/${runA.id}`), 200).project_id;
    assert.equal(expectStatus(await asA.get<TracedRun>(`/api/v1/runs/${intoTrace}`), 200).project_id, ownProject);
  });
});
