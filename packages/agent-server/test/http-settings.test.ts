import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type BerthProcess, request, runBerthExpectingFailure, startBerth } from "@berth/test-support";
import { Receiver } from "./helpers/webhook-receiver.js";

const STUDIO = "https://studio.example";
const NIL = "00000000-0000-0000-0000-000000000000";

type Configurable = { configurable: Record<string, string> };

function preflight(url: string, origin: string, extra: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type", ...extra },
  });
}

async function openApiPaths(url: string): Promise<string[]> {
  const response = await request(url, "GET", "/openapi.json");
  assert.equal(response.status, 200);
  return Object.keys((response.body as { paths: Record<string, unknown> }).paths);
}

describe("http settings: CORS, mount prefix, headers", () => {
  let berth: BerthProcess;
  let api: string;
  before(async () => {
    berth = await startBerth({ project: "http-settings" });
    api = `${berth.url}/api`;
  });
  after(() => berth.stop());

  it("applies the section: no warning about it", () => {
    assert.doesNotMatch(berth.output(), /\\"http(\.[a-z_]+)?\\" is ignored/);
  });

  it("a preflight from an allowed origin, with credentials: the origin echoed, never *", async () => {
    const response = await preflight(`${api}/threads`, STUDIO);
    assert.equal(response.status, 204);
    assert.equal(response.headers.get("access-control-allow-origin"), STUDIO);
    assert.equal(response.headers.get("access-control-allow-credentials"), "true");
    assert.equal(response.headers.get("access-control-max-age"), "300");
    assert.match(response.headers.get("access-control-allow-methods") ?? "", /PATCH/);
    assert.match(response.headers.get("vary") ?? "", /origin/i);
  });

  it("an actual request from an allowed origin exposes the headers clients read, and the project's", async () => {
    const response = await fetch(`${api}/threads`, {
      method: "POST",
      headers: { origin: STUDIO, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("access-control-allow-origin"), STUDIO);
    assert.equal(response.headers.get("access-control-allow-credentials"), "true");
    const exposed = (response.headers.get("access-control-expose-headers") ?? "").split(/, */);
    for (const name of ["content-location", "location", "x-pagination-total", "x-pagination-next", "x-custom"]) {
      assert.ok(exposed.includes(name), name);
    }
  });

  it("an origin neither listed nor matched gets no CORS headers", async () => {
    for (const origin of ["https://evil.example", "https://pr-1.preview.example.evil.example"]) {
      const response = await preflight(`${api}/threads`, origin);
      assert.equal(response.headers.get("access-control-allow-origin"), null, origin);
      const actual = await fetch(`${api}/ok`, { headers: { origin } });
      assert.equal(actual.status, 200);
      assert.equal(actual.headers.get("access-control-allow-origin"), null, origin);
    }
  });

  it("allow_origin_regex allows the whole origins it matches", async () => {
    const origin = "https://pr-42.preview.example";
    const response = await preflight(`${api}/threads`, origin);
    assert.equal(response.headers.get("access-control-allow-origin"), origin);
  });

  it("a Private Network Access preflight is allowed", async () => {
    const response = await preflight(`${api}/threads`, STUDIO, { "access-control-request-private-network": "true" });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get("access-control-allow-private-network"), "true");
    const refused = await preflight(`${api}/threads`, "https://evil.example", {
      "access-control-request-private-network": "true",
    });
    assert.equal(refused.headers.get("access-control-allow-private-network"), null);
  });

  it("a JSON body sent as text/plain creates a thread; invalid JSON stays a 422", async () => {
    const created = await request(api, "POST", "/threads", JSON.stringify({ metadata: { sent_as: "text" } }), {
      "content-type": "text/plain;charset=UTF-8",
    });
    assert.equal(created.status, 200);
    assert.deepEqual((created.body as { metadata: unknown }).metadata, { sent_as: "text" });
    const invalid = await request(api, "POST", "/threads", "{not json", { "content-type": "text/plain" });
    assert.equal(invalid.status, 422);
    const [detail] = (invalid.body as { detail: { loc: unknown; msg: string; type: string }[] }).detail;
    assert.deepEqual(detail?.loc, ["body"]);
    assert.equal(detail?.type, "json_invalid");
  });

  it("serves everything under the prefix, /ok at the root too, and nothing else at the root", async () => {
    assert.equal((await request(api, "GET", "/ok")).status, 200);
    assert.equal((await request(berth.url, "GET", "/ok")).status, 200);
    const root = await request(berth.url, "POST", "/threads", {});
    assert.equal(root.status, 404);
    assert.deepEqual(root.body, { detail: "No route for POST /threads" });
    assert.equal((await request(berth.url, "GET", "/openapi.json")).status, 404);
    assert.equal((await request(berth.url, "GET", "/apiary/ok")).status, 404);
    assert.ok((await openApiPaths(api)).includes("/threads"));
    const docs = await fetch(`${api}/docs`);
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
  });

  it("the SDK works end to end under the prefix, and locations carry it", async () => {
    const client = new Client({ apiUrl: api });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "headers", { input: {} })) as Configurable;
    assert.equal(values.configurable.thread_id, thread.thread_id);
    const run = await request(api, "POST", `/threads/${thread.thread_id}/runs`, { assistant_id: "headers", input: {} });
    assert.equal(run.status, 200);
    assert.match(run.headers.get("content-location") ?? "", new RegExp(`^/api/threads/${thread.thread_id}/runs/`));
    await client.runs.join(thread.thread_id, (run.body as { run_id: string }).run_id);
    const streamed = [];
    for await (const part of client.runs.stream(thread.thread_id, "headers", { input: {} })) streamed.push(part.event);
    assert.ok(streamed.includes("values"));
  });

  it("configurable_headers: includes and excludes choose the headers a run sees; credentials only by exact name", async () => {
    const response = await request(
      api,
      "POST",
      "/runs/wait",
      { assistant_id: "headers", input: {} },
      {
        "x-keep-one": "one",
        "x-keep-secret": "secret",
        "x-other": "other",
        "user-agent": "berth-test",
        authorization: "Bearer named",
        "x-app-key": "app",
        "x-api-key": "wildcard-never",
      },
    );
    assert.equal(response.status, 200);
    const seen = (response.body as Configurable).configurable;
    assert.equal(seen["x-keep-one"], "one");
    assert.equal(seen["user-agent"], "berth-test");
    assert.equal(seen.authorization, "Bearer named");
    assert.equal(seen["x-app-key"], "app");
    for (const name of ["x-keep-secret", "x-other", "x-api-key"]) assert.equal(seen[name], undefined, name);
  });

  it("logging_headers: a request's log line carries the headers selected, credentials only by exact name", async () => {
    const id = crypto.randomUUID();
    await request(api, "GET", `/threads/${NIL}`, undefined, { "x-request-id": id, "x-api-key": "never-logged", "x-other": "x" });
    await sleep(500);
    const line = berth
      .output()
      .split("\n")
      .find((text) => text.includes(id));
    assert.ok(line, "a request line with the id");
    const logged = JSON.parse(line) as { msg: string; status: number; url: string; headers: Record<string, string> };
    assert.equal(logged.msg, "request");
    assert.equal(logged.status, 404);
    assert.equal(logged.url, `/api/threads/${NIL}`);
    assert.deepEqual(logged.headers, { "x-request-id": id });
  });
});

describe("http settings: switching off assistants, store and webhooks", () => {
  let berth: BerthProcess;
  const receiver = new Receiver();
  before(async () => {
    await receiver.start();
    berth = await startBerth({ project: "http-settings-off-assistants", env: { BERTH_WEBHOOK_ALLOW_PRIVATE: "1" } });
  });
  after(async () => {
    await berth.stop();
    await receiver.stop();
  });

  it("the families switched off are 404s and out of /openapi.json; the others work", async () => {
    const search = await request(berth.url, "POST", "/assistants/search", {});
    assert.equal(search.status, 404);
    assert.ok(typeof (search.body as { detail: unknown }).detail === "string");
    assert.equal((await request(berth.url, "GET", "/store/namespaces")).status, 404);
    const paths = await openApiPaths(berth.url);
    assert.ok(!paths.some((path) => path.startsWith("/assistants") || path.startsWith("/store") || path.endsWith("/webhook")));
    assert.ok(paths.includes("/threads") && paths.includes("/runs/wait") && paths.includes("/info"));
    assert.equal((await request(berth.url, "GET", "/info")).status, 200);
  });

  it("without configurable_headers, runs see the x-* headers and user-agent, credentials withheld, as before", async () => {
    const response = await request(
      berth.url,
      "POST",
      "/runs/wait",
      { assistant_id: "headers", input: {} },
      { "x-other": "other", "user-agent": "berth-test", "x-api-key": "key", authorization: "Bearer no" },
    );
    const seen = (response.body as Configurable).configurable;
    assert.equal(seen["x-other"], "other");
    assert.equal(seen["user-agent"], "berth-test");
    assert.equal(seen["x-api-key"], undefined);
    assert.equal(seen.authorization, undefined);
  });

  it("a run with a webhook runs, and no webhook is sent", async () => {
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "headers", { input: {}, webhook: `${receiver.url}/hook` });
    await berth.client.runs.join(thread.thread_id, run.run_id);
    assert.equal((await berth.client.runs.get(thread.thread_id, run.run_id)).status, "success");
    assert.equal((await request(berth.url, "GET", `/threads/${thread.thread_id}/runs/${run.run_id}/webhook`)).status, 404);
    await sleep(1_000);
    assert.equal(receiver.deliveries.length, 0);
  });

  it("the default CORS (any origin) answers a Private Network Access preflight", async () => {
    const response = await preflight(`${berth.url}/threads`, "https://smith.example", {
      "access-control-request-private-network": "true",
    });
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.equal(response.headers.get("access-control-allow-private-network"), "true");
  });
});

describe("http settings: switching off threads and runs", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "http-settings-off-runs" });
  });
  after(() => berth.stop());

  it("threads (with their state) and runs (with crons) are 404s and out of /openapi.json; assistants work", async () => {
    for (const [method, path] of [
      ["POST", "/threads"],
      ["GET", `/threads/${NIL}/state`],
      ["POST", "/runs/wait"],
      ["POST", `/threads/${NIL}/runs`],
      ["POST", "/runs/crons/search"],
    ] as const) {
      const body = method === "GET" ? undefined : {};
      assert.equal((await request(berth.url, method, path, body)).status, 404, `${method} ${path}`);
    }
    const paths = await openApiPaths(berth.url);
    assert.ok(!paths.some((path) => path.startsWith("/threads") || path.startsWith("/runs")));
    assert.ok(paths.includes("/assistants/search") && paths.includes("/store/items"));
    assert.equal((await berth.client.assistants.search({ graphId: "headers" })).length, 1);
  });
});

describe("http settings: switching off meta", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "http-settings-off-meta" });
  });
  after(() => berth.stop());

  it("/info, /metrics, /openapi.json and /docs are 404s; /ok and the API still answer", async () => {
    for (const path of ["/info", "/metrics", "/openapi.json", "/docs", "/docs/"]) {
      assert.equal((await request(berth.url, "GET", path)).status, 404, path);
    }
    assert.deepEqual((await request(berth.url, "GET", "/ok")).body, { ok: true });
    const thread = await berth.client.threads.create();
    assert.ok(thread.thread_id);
  });
});

describe("http settings: a bad value", () => {
  it("stops the start, naming the key", async () => {
    const { code, output } = await runBerthExpectingFailure({ project: "http-settings-bad" });
    assert.equal(code, 1);
    assert.match(output, /http\.mount_prefix/);
  });
});
