import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type ControlPlane, startControlPlane } from "@berth/test-support";
import { type Feedback, multipartBody, postMultipart, runFeedback, runTree, type TracedRun } from "./helpers/tracing.js";

/** A dotted-order segment: UTC time to the microsecond, then the run id. */
const segment = (date: Date, id: string) =>
  `${date.toISOString().replace(/[-:]/g, "").replace(".", "").replace("Z", "000Z")}${id}`;

function rootRun(project: string) {
  const id = randomUUID();
  const start = new Date(Date.now() - 1000);
  return {
    id,
    trace_id: id,
    dotted_order: segment(start, id),
    name: "root",
    run_type: "chain",
    start_time: start.toISOString(),
    session_name: project,
  };
}

describe("tracing: ingestion endpoints on the wire", () => {
  let cp: ControlPlane;
  const project = `wire-${randomUUID().slice(0, 8)}`;
  const get = async (id: string) => (await cp.admin.get<TracedRun>(`/api/v1/runs/${id}`)).body;

  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  test("a patch before its post, in separate /runs/batch requests: merged", async () => {
    const run = rootRun(project);
    const end = new Date().toISOString();
    const patch = {
      id: run.id,
      trace_id: run.id,
      dotted_order: run.dotted_order,
      outputs: { answer: 42 },
      end_time: end,
      extra: { metadata: { thread_id: "late" } },
      session_name: project,
    };
    assert.equal((await cp.admin.post("/api/v1/runs/batch", { post: [], patch: [patch] })).status, 202);
    const early = await get(run.id);
    assert.equal(early.name, null, "known from the patch only so far");
    assert.deepEqual(early.outputs, { answer: 42 });
    assert.equal(
      (
        await cp.admin.post("/api/v1/runs/batch", {
          post: [{ ...run, inputs: { q: 1 }, extra: { metadata: { thread_id: "late", user: "u1" } } }],
        })
      ).status,
      202,
    );
    const merged = await get(run.id);
    assert.equal(merged.name, "root");
    assert.deepEqual(merged.inputs, { q: 1 });
    assert.deepEqual(merged.outputs, { answer: 42 });
    assert.equal(merged.end_time, end);
    assert.equal(merged.start_time, run.start_time);
    assert.deepEqual(merged.extra.metadata, { thread_id: "late", user: "u1" });
    assert.equal(merged.status, "success");
  });

  test("post and patch of a run in one multipart request, fields as separate parts; a second post changes nothing", async () => {
    const run = rootRun(project);
    const { inputs, ...post } = { ...run, inputs: { q: "multi" } };
    const body = multipartBody([
      { name: `post.${run.id}`, value: post },
      { name: `post.${run.id}.inputs`, value: inputs },
      { name: `post.${run.id}.extra`, value: { metadata: { thread_id: "mp" } } },
      { name: `patch.${run.id}`, value: { id: run.id, trace_id: run.id, dotted_order: run.dotted_order, end_time: Date.now() } },
      { name: `patch.${run.id}.outputs`, value: { done: true } },
      { name: `patch.${run.id}.error`, value: JSON.stringify("it broke") }, // JSON, as the client serializes every field
      { name: `attachment.${run.id}.image`, value: "raw bytes", contentType: "image/png" },
    ]);
    assert.deepEqual(await postMultipart(cp.url, cp.adminKey, body), { status: 202, body: {} });
    const stored = await get(run.id);
    assert.deepEqual(
      [stored.inputs, stored.outputs, stored.error, stored.thread_id, stored.status],
      [{ q: "multi" }, { done: true }, "it broke", "mp", "error"],
    );
    // A retried post (the client retries failed requests) only fills what is empty.
    await postMultipart(cp.url, cp.adminKey, multipartBody([{ name: `post.${run.id}`, value: { ...post, name: "renamed" } }]));
    assert.equal((await get(run.id)).name, "root");
  });

  test("gzip-compressed multipart with feedback parts; children without trace_id find their parent's", async () => {
    const run = rootRun(project);
    const child = randomUUID();
    const feedbackId = randomUUID();
    const body = multipartBody([
      { name: `post.${run.id}`, value: run },
      {
        name: `post.${child}`,
        value: { id: child, parent_run_id: run.id, name: "child", run_type: "llm", session_name: project },
      },
      {
        name: `feedback.${feedbackId}`,
        value: {
          run_id: run.id,
          trace_id: run.id,
          key: "quality",
          score: 0.75,
          comment: "fine",
          feedback_source: { type: "model", metadata: { by: "judge" } },
        },
      },
    ]);
    assert.equal((await postMultipart(cp.url, cp.adminKey, body, { gzip: true })).status, 202);
    const tree = await runTree(cp.admin, run.id);
    assert.deepEqual(
      tree.child_runs.map((c) => [c.id, c.trace_id]),
      [[child, run.id]],
    );
    const feedback = await runFeedback(cp.admin, run.id);
    assert.deepEqual(
      feedback.map((f: Feedback) => [f.id, f.key, f.score, f.comment, f.source, f.metadata]),
      [[feedbackId, "quality", 0.75, "fine", "model", { by: "judge" }]],
    );
  });

  test("bad bodies are 4xx JSON, never 500", async () => {
    const run = rootRun(project);
    const expect4xx = (status: number, response: { status: number; body: unknown }, why: string) => {
      assert.equal(response.status, status, `${why}: ${JSON.stringify(response.body)}`);
      assert.ok(response.body && typeof response.body === "object" && "detail" in response.body, `${why}: JSON detail`);
    };
    expect4xx(
      422,
      await postMultipart(cp.url, cp.adminKey, multipartBody([{ name: `post.${run.id}`, value: "{not json" }])),
      "bad JSON part",
    );
    expect4xx(
      422,
      await postMultipart(cp.url, cp.adminKey, multipartBody([{ name: `post.${run.id}`, value: { ...run, name: undefined } }])),
      "post without name",
    );
    expect4xx(
      422,
      await postMultipart(cp.url, cp.adminKey, multipartBody([{ name: "post.not-a-uuid", value: run }])),
      "id not a UUID",
    );
    expect4xx(
      422,
      await postMultipart(
        cp.url,
        cp.adminKey,
        multipartBody([{ name: `post.${run.id}`, value: { ...run, start_time: "yesterday" } }]),
      ),
      "bad time",
    );
    expect4xx(
      422,
      await postMultipart(cp.url, cp.adminKey, multipartBody([{ name: `upsert.${run.id}`, value: run }])),
      "unknown part",
    );
    expect4xx(422, await postMultipart(cp.url, cp.adminKey, Buffer.from("no boundary here")), "not multipart");
    expect4xx(
      422,
      await postMultipart(cp.url, cp.adminKey, multipartBody([{ name: `post.${run.id}`, value: run }]), { boundary: "other" }),
      "wrong boundary",
    );
    expect4xx(
      422,
      await postMultipart(cp.url, cp.adminKey, Buffer.from("not gzip"), { headers: { "content-encoding": "gzip" } }),
      "bad gzip",
    );
    expect4xx(
      415,
      await postMultipart(cp.url, cp.adminKey, multipartBody([{ name: `post.${run.id}`, value: run }]), {
        headers: { "content-encoding": "lz4" },
      }),
      "unknown encoding",
    );
    expect4xx(422, await cp.admin.call("POST", "/api/v1/runs/multipart", { post: [run] }), "JSON to the multipart endpoint");
    expect4xx(422, await cp.admin.call("POST", "/api/v1/runs/batch", "{", { "content-type": "application/json" }), "bad JSON");
    expect4xx(422, await cp.admin.post("/api/v1/runs/batch", { post: [{ ...run, inputs: "text" }] }), "inputs not an object");
    expect4xx(422, await cp.admin.post("/api/v1/runs", { ...run, tags: "a,b" }), "tags not a list");
    expect4xx(422, await cp.admin.patch("/api/v1/runs/not-a-uuid", { end_time: 1 }), "path id not a UUID");
    expect4xx(415, await cp.admin.call("POST", "/api/v1/runs", "<run/>", { "content-type": "application/xml" }), "XML");
    expect4xx(
      404,
      await cp.admin.post("/api/v1/runs", { ...run, session_name: undefined, session_id: randomUUID() }),
      "unknown session_id",
    );
    expect4xx(400, await cp.admin.post("/api/v1/feedback", { key: "k", session_id: randomUUID() }), "project-level feedback");
    expect4xx(
      401,
      await postMultipart(cp.url, "berth_wrong", multipartBody([{ name: `post.${run.id}`, value: run }])),
      "wrong key",
    );
    const noKey = await fetch(`${cp.url}/api/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(run),
    });
    assert.equal(noKey.status, 401);
    assert.equal((await cp.admin.get(`/api/v1/runs/${run.id}`)).status, 404, "nothing was stored");
  });

  test("POST /runs without trace_id or dotted_order: a root is its own trace; error objects become text", async () => {
    const id = randomUUID();
    const response = await cp.admin.post("/api/v1/runs", {
      id,
      name: "bare",
      run_type: "tool",
      start_time: "2024-05-01T12:00:00.123456",
      error: { type: "ValueError" },
      session_name: project,
    });
    assert.equal(response.status, 202, JSON.stringify(response.body));
    const stored = await get(id);
    assert.equal(stored.trace_id, id);
    assert.equal(stored.start_time, "2024-05-01T12:00:00.123Z", "a time without zone is UTC");
    assert.equal(stored.error, '{"type":"ValueError"}');
  });
});
