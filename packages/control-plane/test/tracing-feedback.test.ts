import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { RunTree } from "langsmith";
import { type ControlPlane, startControlPlane } from "@berth/test-support";
import { expectStatus, type Feedback, runFeedback, tracingClient } from "./helpers/tracing.js";

interface Answer<T = unknown> {
  status: number;
  body: T;
}

/** A feedback URL followed as a browser or a chat UI would: plain fetch, no headers at all. */
async function follow<T = Feedback>(
  url: string,
  init: { method: "GET" | "POST"; body?: string } = { method: "GET" },
): Promise<Answer<T>> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

const post = (url: string, body: unknown) =>
  follow(url, { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) });

function assertDetail(answer: Answer, status: number, pattern?: RegExp) {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  const detail = (answer.body as { detail?: unknown })?.detail;
  assert.ok(detail !== undefined, `JSON detail: ${JSON.stringify(answer.body)}`);
  if (pattern) assert.match(typeof detail === "string" ? detail : JSON.stringify(detail), pattern);
}

describe("tracing: feedback and pre-signed feedback URLs", () => {
  let cp: ControlPlane;
  let runId: string;
  let traceId: string;
  const client = () => tracingClient(cp.url, cp.adminKey);

  before(async () => {
    cp = await startControlPlane();
    const tracer = client();
    const root = new RunTree({ name: "agent", run_type: "chain", inputs: { q: 1 }, project_name: "feedback", client: tracer });
    await root.postRun();
    await root.end({ a: 1 });
    await root.patchRun();
    await tracer.awaitPendingTraceBatches();
    runId = root.id;
    traceId = root.trace_id;
  });
  after(() => cp.stop());

  test("createPresignedFeedbackToken → POST and GET with plain fetch → feedback on the run", async () => {
    const token = await client().createPresignedFeedbackToken(runId, "thumbs");
    assert.match(token.url, new RegExp(`^${cp.url}/api/v1/feedback/tokens/[A-Za-z0-9_-]{43}$`));
    assert.equal(token.url.split("/").pop(), token.id);
    const lifetime = Date.parse(token.expires_at) - Date.now();
    assert.ok(lifetime > 2.9 * 3600_000 && lifetime <= 3 * 3600_000, "the client's default: 3 hours");

    const byPost = await post(token.url, {
      score: 1,
      comment: "great",
      value: "up",
      correction: { answer: "b" },
      metadata: { ui: "chat" },
    });
    assert.equal(byPost.status, 200, JSON.stringify(byPost.body));
    assert.deepEqual(
      [
        byPost.body.run_id,
        byPost.body.key,
        byPost.body.score,
        byPost.body.comment,
        byPost.body.value,
        byPost.body.correction,
        byPost.body.metadata,
        byPost.body.source,
        byPost.body.trace_id,
      ],
      [runId, "thumbs", 1, "great", "up", { answer: "b" }, { ui: "chat" }, "token", traceId],
    );
    assert.ok(byPost.body.id);

    const query = new URLSearchParams({
      score: "0.5",
      value: JSON.stringify({ stars: 3 }),
      comment: "meh",
      correction: JSON.stringify({ fix: 1 }),
      metadata: JSON.stringify({ via: "link" }),
    });
    const byGet = await follow(`${token.url}?${query}`);
    assert.equal(byGet.status, 200, JSON.stringify(byGet.body));
    assert.deepEqual(
      [byGet.body.score, byGet.body.value, byGet.body.comment, byGet.body.correction, byGet.body.metadata],
      [0.5, { stars: 3 }, "meh", { fix: 1 }, { via: "link" }],
    );
    const bare = await follow(`${token.url}?score=1`);
    assert.equal(bare.status, 200);
    const empty = await follow(token.url, { method: "POST" });
    assert.equal(empty.status, 200, "every field is optional");

    const recorded = await runFeedback(cp.admin, runId);
    const ids = recorded.map((feedback) => feedback.id);
    for (const answer of [byPost, byGet, bare, empty]) assert.ok(ids.includes(answer.body.id));
    assert.ok(
      recorded
        .filter((feedback) => ids.includes(feedback.id))
        .every((feedback) => feedback.key === "thumbs" && feedback.run_id === runId),
    );
  });

  test("expired (an expiration in the past), forged and invalid submissions are refused with JSON", async () => {
    const expired = await client().createPresignedFeedbackToken(runId, "late", {
      expiration: new Date(Date.now() - 60_000).toISOString(),
    });
    assertDetail(await post(expired.url, { score: 1 }), 410, /expired/);
    assertDetail(await follow(`${expired.url}?score=1`), 410, /expired/);

    const forged = `${cp.url}/api/v1/feedback/tokens/${randomBytes(32).toString("base64url")}`;
    assertDetail(await post(forged, { score: 1 }), 404, /not found/);
    assertDetail(await follow(`${forged}?score=1`), 404, /not found/);

    const token = await client().createPresignedFeedbackToken(runId, "strict");
    assertDetail(await post(token.url, { score: "abc" }), 422);
    assertDetail(await follow(`${token.url}?score=abc`), 422);
    assertDetail(await follow(`${token.url}?score=`), 422);
    assertDetail(await post(token.url, { score: 1, rating: 5 }), 422);
    assertDetail(await follow(`${token.url}?rating=5`), 422);
    assertDetail(await post(token.url, "{not json"), 422);
    assertDetail(await post(token.url, { metadata: "text" }), 422);
    assertDetail(await follow(`${token.url}?metadata=notjson`), 422);
    assertDetail(await follow(`${token.url}?metadata=${encodeURIComponent("[1]")}`), 422);
    assert.equal(
      (await runFeedback(cp.admin, runId)).filter((feedback) => feedback.key === "strict").length,
      0,
      "nothing recorded",
    );
  });

  test("feedback_config bounds the score; a token works before its run is ingested", async () => {
    const pending = randomUUID();
    const token = await client().createPresignedFeedbackToken(pending, "rating", {
      expiration: { days: 1 },
      feedbackConfig: { type: "continuous", min: 0, max: 1 },
    });
    assertDetail(await post(token.url, { score: 5 }), 422, /between 0 and 1/);
    const answer = await post(token.url, { score: 0.25 });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.trace_id, null, "the run is not ingested yet");
    const lifetime =
      Date.parse(
        (await client().createPresignedFeedbackToken(pending, "x", { expiration: { hours: 2, minutes: 30 } })).expires_at,
      ) - Date.now();
    assert.ok(lifetime > 2.4 * 3600_000 && lifetime <= 2.5 * 3600_000);
  });

  test("default lifetime: BERTH_FEEDBACK_TOKEN_TTL_SECONDS (1 day)", async () => {
    const token = expectStatus(
      await cp.admin.post<{ expires_at: string }>("/api/v1/feedback/tokens", { run_id: runId, feedback_key: "day" }),
      200,
    );
    const lifetime = Date.parse(token.expires_at) - Date.now();
    assert.ok(lifetime > 86_300_000 && lifetime <= 86_400_000, `${lifetime} ms`);
    assertDetail(await cp.admin.post("/api/v1/feedback/tokens", { run_id: "nope", feedback_key: "k" }), 422);
    assertDetail(
      await cp.admin.post("/api/v1/feedback/tokens", { run_id: runId, feedback_key: "k", expires_at: "tomorrow" }),
      422,
    );
    const noKey = await fetch(`${cp.url}/api/v1/feedback/tokens`, {
      method: "POST",
      body: JSON.stringify({ run_id: runId, feedback_key: "k" }),
    });
    assert.equal(noKey.status, 401, "issuing a token needs an API key");
  });

  test("the token URL keeps the /api-host prefix the token was requested under", async () => {
    const token = await tracingClient(cp.url, cp.adminKey, { prefix: "/api-host" }).createPresignedFeedbackToken(
      runId,
      "prefixed",
    );
    assert.ok(token.url.startsWith(`${cp.url}/api-host/api/v1/feedback/tokens/`), token.url);
    assert.equal((await post(token.url, { score: 1 })).status, 200);
  });

  test("createFeedback with an API key: directly (POST /feedback) and batched with the trace (multipart)", async () => {
    const direct = await client().createFeedback(runId, "correctness", {
      score: true,
      comment: "right",
      sourceInfo: { judge: "human" },
    });
    const batching = client();
    const batched = await batching.createFeedback(runId, "helpfulness", { score: 0.8, traceId, feedbackSourceType: "app" });
    await batching.awaitPendingTraceBatches();
    const recorded = await runFeedback(cp.admin, runId);
    const find = (id: string) => recorded.find((feedback) => feedback.id === id);
    assert.deepEqual(
      [
        find(direct.id)?.key,
        find(direct.id)?.score,
        find(direct.id)?.comment,
        find(direct.id)?.source,
        find(direct.id)?.metadata,
      ],
      ["correctness", 1, "right", "api", { judge: "human" }],
    );
    assert.deepEqual([find(batched.id)?.key, find(batched.id)?.score, find(batched.id)?.source], ["helpfulness", 0.8, "app"]);
    assert.equal((await cp.admin.get(`/api/v1/runs/${randomUUID()}/feedback`)).status, 404);
  });
});

describe("tracing: feedback tokens with BERTH_FEEDBACK_TOKEN_TTL_SECONDS=0 and BERTH_CONTROL_PLANE_URL", () => {
  let cp: ControlPlane;

  before(async () => {
    cp = await startControlPlane({
      env: { BERTH_FEEDBACK_TOKEN_TTL_SECONDS: "0", BERTH_CONTROL_PLANE_URL: "https://berth.example.com/api-host/" },
    });
  });
  after(() => cp.stop());

  test("a token issued without expiry is expired at once; its URL is built on the public URL", async () => {
    const token = expectStatus(
      await cp.admin.post<{ id: string; url: string }>("/api/v1/feedback/tokens", { run_id: randomUUID(), feedback_key: "k" }),
      200,
    );
    assert.equal(token.url, `https://berth.example.com/api-host/api/v1/feedback/tokens/${token.id}`);
    assertDetail(await post(`${cp.url}/api/v1/feedback/tokens/${token.id}`, { score: 1 }), 410);
    assertDetail(await follow(`${cp.url}/api/v1/feedback/tokens/${token.id}?score=1`), 410);
  });
});
