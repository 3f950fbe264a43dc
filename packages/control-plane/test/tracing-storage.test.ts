import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type ControlPlane, createDeployment, externalImageBody, startControlPlane, uniqueName } from "@berth/test-support";
import { expectStatus, listRuns, multipartBody, postMultipart, runFeedback, runTree, type TracedRun } from "./helpers/tracing.js";

describe("tracing: storage behaviours", () => {
  let cp: ControlPlane;
  const get = async (id: string) => expectStatus(await cp.admin.get<TracedRun>(`/api/v1/runs/${id}`), 200);

  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  test("posts and patches of the same runs sent concurrently, in separate requests, all merge", async () => {
    const project = `race-${randomUUID().slice(0, 8)}`;
    const root = randomUUID();
    const ids = [root, ...Array.from({ length: 19 }, () => randomUUID())];
    const requests = ids.flatMap((id, index) => {
      const parent = index === 0 ? {} : { parent_run_id: root };
      const post = {
        id,
        trace_id: root,
        name: `run-${index}`,
        run_type: "chain",
        inputs: { index },
        session_name: project,
        extra: { metadata: { thread_id: "race" } },
        ...parent,
      };
      const patch = { id, trace_id: root, outputs: { index }, end_time: new Date().toISOString(), session_name: project };
      // Each run's post and patch go out at once, in different requests and through different endpoints.
      return [
        cp.admin.post("/api/v1/runs/batch", { post: [post] }),
        index % 2 === 0
          ? cp.admin.patch(`/api/v1/runs/${id}`, patch)
          : postMultipart(cp.url, cp.adminKey, multipartBody([{ name: `patch.${id}`, value: patch }])),
      ];
    });
    for (const response of await Promise.all(requests)) assert.equal(response.status, 202, JSON.stringify(response.body));
    for (const [index, id] of ids.entries()) {
      const run = await get(id);
      assert.deepEqual(
        [run.name, run.inputs, run.outputs, run.status, run.thread_id],
        [`run-${index}`, { index }, { index }, "success", "race"],
      );
    }
    assert.equal((await runTree(cp.admin, root)).child_runs.length, 19);
  });

  test("NUL characters and lone surrogates are stored without failing the batch", async () => {
    const id = randomUUID();
    const response = await cp.admin.post("/api/v1/runs", {
      id,
      name: "nul\u0000name",
      run_type: "llm",
      inputs: { text: "a\u0000b", odd: "\ud800" },
      error: "bad\u0000error",
      extra: { metadata: { thread_id: "t\u0000x" } },
      session_name: `nul-${randomUUID().slice(0, 8)}`,
    });
    assert.equal(response.status, 202, JSON.stringify(response.body));
    const run = await get(id);
    assert.equal(run.name, "nulname");
    assert.equal(run.error, "baderror");
    assert.equal(run.thread_id, "tx");
    const feedback = await cp.admin.post("/api/v1/feedback", {
      run_id: id,
      key: "k\u0000",
      comment: "c\u0000",
      value: "v\u0000",
    });
    assert.equal(feedback.status, 200, JSON.stringify(feedback.body));
    assert.deepEqual(
      (await runFeedback(cp.admin, id)).map((f) => f.key),
      ["k"],
    );
  });

  test("bodies over Fastify's default 1 MiB are taken (JSON and multipart)", async () => {
    const big = "x".repeat(3 * 1024 * 1024);
    const project = `big-${randomUUID().slice(0, 8)}`;
    const [a, b] = [randomUUID(), randomUUID()];
    const json = await cp.admin.post("/api/v1/runs/batch", {
      post: [{ id: a, name: "a", run_type: "chain", inputs: { big }, session_name: project }],
    });
    assert.equal(json.status, 202, JSON.stringify(json.body));
    const multipart = await postMultipart(
      cp.url,
      cp.adminKey,
      multipartBody([
        { name: `post.${b}`, value: { id: b, name: "b", run_type: "chain", session_name: project } },
        { name: `post.${b}.inputs`, value: { big } },
      ]),
      { gzip: true },
    );
    assert.equal(multipart.status, 202, JSON.stringify(multipart.body));
    assert.equal(((await get(a)).inputs as { big: string }).big.length, big.length);
    assert.equal(((await get(b)).inputs as { big: string }).big.length, big.length);
  });

  test("a deployment's tracing project takes its traces; deleting it with delete_tracing_project removes them", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("traced")));
    const id = randomUUID();
    assert.equal(
      (await cp.admin.post("/api/v1/runs", { id, name: "r", run_type: "chain", session_name: deployment.name })).status,
      202,
    );
    const project = expectStatus(
      await cp.admin.get<{ id: string; deployment_id: string }>(`/api/v1/projects/${deployment.name}`),
      200,
    );
    assert.equal(project.deployment_id, deployment.id, "the project created with the deployment");
    assert.deepEqual(
      (await listRuns(cp.admin, deployment.name)).map((run) => run.id),
      [id],
    );
    assert.equal((await cp.admin.delete(`/v2/deployments/${deployment.id}?delete_tracing_project=true`)).status, 204);
    assert.equal((await cp.admin.get(`/api/v1/runs/${id}`)).status, 404);
    assert.equal((await cp.admin.get(`/api/v1/projects/${project.id}/runs`)).status, 404);
  });

  test("run ids are compared case-insensitively", async () => {
    const id = randomUUID();
    const project = `case-${randomUUID().slice(0, 8)}`;
    assert.equal(
      (await cp.admin.post("/api/v1/runs", { id: id.toUpperCase(), name: "r", run_type: "chain", session_name: project })).status,
      202,
    );
    assert.equal((await cp.admin.patch(`/api/v1/runs/${id}`, { outputs: { ok: 1 }, end_time: Date.now() })).status, 202);
    const run = expectStatus(await cp.admin.get<TracedRun>(`/api/v1/runs/${id.toUpperCase()}`), 200);
    assert.deepEqual([run.id, run.outputs, run.status], [id, { ok: 1 }, "success"]);
  });
});
