import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { RunTree } from "langsmith";
import { type Api, api, type ControlPlane, type ErrorBody, startControlPlane } from "@berth/test-support";
import { expectStatus, listRuns, runFeedback, type TracedRun, tracingClient } from "./helpers/tracing.js";

describe("tracing: workspaces are isolated", () => {
  let cp: ControlPlane;
  let keyA: string;
  let keyB: string;
  let clientA: Api;
  let clientB: Api;
  let runA: RunTree;
  let projectA: { id: string; name: string };
  const project = "shared-name";
  const threadId = "thread-1";

  before(async () => {
    cp = await startControlPlane();
    const [a, b] = await Promise.all([cp.createTenant("trace-a"), cp.createTenant("trace-b")]);
    keyA = (await cp.createKey({ tenants: [a.id] })).key;
    keyB = (await cp.createKey({ tenants: [b.id] })).key;
    clientA = api(cp.url, keyA);
    clientB = api(cp.url, keyB);
    const tracer = tracingClient(cp.url, keyA);
    runA = new RunTree({
      name: "secret-agent",
      run_type: "llm",
      inputs: { secret: "a" },
      project_name: project,
      client: tracer,
      extra: { metadata: { thread_id: threadId } },
    });
    await runA.postRun();
    await runA.end({ usage_metadata: { input_tokens: 5, output_tokens: 5, total_tokens: 10 } });
    await runA.patchRun();
    await tracer.createFeedback(runA.id, "private", { score: 1 });
    await tracer.awaitPendingTraceBatches();
    projectA = expectStatus(await clientA.get<{ id: string; name: string }>(`/api/v1/projects/${project}`), 200);
  });
  after(() => cp.stop());

  /** A 404 that reads like the one for a run that never existed. */
  async function assertHidden(path: string, id: string) {
    const foreign = await clientB.get(path);
    assert.equal(foreign.status, 404, JSON.stringify(foreign.body));
    const missing = randomUUID();
    const unknown = await clientB.get(path.replace(id, missing));
    assert.equal(unknown.status, 404);
    const detail = (body: unknown, value: string) => String((body as ErrorBody).detail).replaceAll(value, "<id>");
    assert.equal(detail(foreign.body, id), detail(unknown.body, missing));
  }

  test("A's run, tree, feedback and project are 404 for B", async () => {
    await assertHidden(`/api/v1/runs/${runA.id}`, runA.id);
    await assertHidden(`/api/v1/runs/${runA.id}/tree`, runA.id);
    await assertHidden(`/api/v1/runs/${runA.id}/spans`, runA.id);
    await assertHidden(`/api/v1/runs/${runA.id}/feedback`, runA.id);
    await assertHidden(`/api/v1/projects/${projectA.id}/runs`, projectA.id);
    await assertHidden(`/api/v1/projects/${projectA.id}/threads/${threadId}/usage`, projectA.id);
    assert.equal((await clientB.get(`/api/v1/projects/${project}`)).status, 404, "B has no project of that name");
  });

  test("B tracing into a project of the same name gets its own project; nothing of A shows", async () => {
    const tracer = tracingClient(cp.url, keyB);
    const runB = new RunTree({
      name: "b-agent",
      run_type: "llm",
      inputs: {},
      project_name: project,
      client: tracer,
      extra: { metadata: { thread_id: threadId } },
    });
    await runB.postRun();
    await runB.end({ usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } });
    await runB.patchRun();
    await tracer.awaitPendingTraceBatches();
    const projectB = expectStatus(await clientB.get<{ id: string }>(`/api/v1/projects/${project}`), 200);
    assert.notEqual(projectB.id, projectA.id);
    assert.deepEqual(
      (await listRuns(clientB, project, `?thread_id=${threadId}`)).map((run) => run.id),
      [runB.id],
    );
    assert.deepEqual(
      (await listRuns(clientA, project, `?thread_id=${threadId}`)).map((run) => run.id),
      [runA.id],
    );
    const usageB = expectStatus(
      await clientB.get<{ total_tokens: number }>(`/api/v1/projects/${project}/threads/${threadId}/usage`),
      200,
    );
    assert.equal(usageB.total_tokens, 2);
  });

  test("B cannot write into A's run or project", async () => {
    // The same run id from B is B's own run; A's stays as it was.
    const hijack = {
      id: runA.id,
      trace_id: runA.id,
      name: "hijacked",
      run_type: "chain",
      outputs: { stolen: true },
      session_name: "b-project",
    };
    assert.equal((await clientB.post("/api/v1/runs", hijack)).status, 202);
    assert.equal((await clientB.patch(`/api/v1/runs/${runA.id}`, { outputs: { stolen: true }, error: "x" })).status, 202);
    const stillA = expectStatus(await clientA.get<TracedRun>(`/api/v1/runs/${runA.id}`), 200);
    assert.equal(stillA.name, "secret-agent");
    assert.deepEqual(stillA.inputs, { secret: "a" });
    assert.equal(stillA.error, null);
    assert.equal(stillA.project_id, projectA.id);
    assert.equal(expectStatus(await clientB.get<TracedRun>(`/api/v1/runs/${runA.id}`), 200).name, "hijacked");

    // A's project by id is unknown to B.
    const intoA = await clientB.post("/api/v1/runs", { id: randomUUID(), name: "x", run_type: "chain", session_id: projectA.id });
    assert.equal(intoA.status, 404);

    // Feedback from B (directly or by B's token) lands in B's workspace only.
    assert.equal((await clientB.post("/api/v1/feedback", { run_id: runA.id, key: "b-says", score: 0 })).status, 200);
    const token = expectStatus(
      await clientB.post<{ url: string }>("/api/v1/feedback/tokens", { run_id: runA.id, feedback_key: "b-token" }),
      200,
    );
    assert.equal((await fetch(token.url, { method: "POST", body: JSON.stringify({ score: 0 }) })).status, 200);
    assert.deepEqual(
      (await runFeedback(clientA, runA.id)).map((feedback) => feedback.key),
      ["private"],
    );
    assert.deepEqual((await runFeedback(clientB, runA.id)).map((feedback) => feedback.key).sort(), ["b-says", "b-token"]);
  });
});
