import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";

describe("meta endpoints", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  it("GET /ok answers ok", async () => {
    const response = await request(berth.url, "GET", "/ok");
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { ok: true });
  });

  it("GET /info reports the version and flags", async () => {
    const response = await request(berth.url, "GET", "/info");
    assert.equal(response.status, 200);
    const info = response.body as { version: string; flags: Record<string, boolean> };
    assert.match(info.version, /^\d+\.\d+\.\d+/);
    assert.equal(info.flags.assistants, true);
    assert.equal(info.flags.crons, true);
  });

  it("GET /openapi.json documents every route with its request schema", async () => {
    const response = await request(berth.url, "GET", "/openapi.json");
    assert.equal(response.status, 200);
    const document = response.body as { openapi: string; paths: Record<string, Record<string, { requestBody?: unknown }>> };
    assert.match(document.openapi, /^3\./);
    for (const path of [
      "/assistants",
      "/assistants/search",
      "/assistants/{assistant_id}",
      "/threads",
      "/threads/{thread_id}/state",
      "/threads/{thread_id}/history",
      "/ok",
    ]) {
      assert.ok(document.paths[path], `missing ${path}`);
    }
    const createThread = document.paths["/threads"].post.requestBody as {
      content: { "application/json": { schema: { properties: Record<string, unknown> } } };
    };
    assert.ok(createThread.content["application/json"].schema.properties.supersteps);
  });

  it("GET /docs serves the API browser", async () => {
    const response = await fetch(`${berth.url}/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await response.text(), /swagger/i);
  });

  it("an unknown route is a JSON 404", async () => {
    const response = await request(berth.url, "GET", "/no/such/route");
    assert.equal(response.status, 404);
    assert.deepEqual(response.body, { detail: "No route for GET /no/such/route" });
  });

  it("CORS preflights allow every method the API uses (PATCH, PUT, DELETE too) and the headers asked for", async () => {
    for (const method of ["PATCH", "PUT", "DELETE"]) {
      const response = await fetch(`${berth.url}/threads/00000000-0000-0000-0000-000000000000`, {
        method: "OPTIONS",
        headers: {
          origin: "http://example.test",
          "access-control-request-method": method,
          "access-control-request-headers": "content-type,x-api-key",
        },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("access-control-allow-origin"), "*");
      assert.ok((response.headers.get("access-control-allow-methods") ?? "").split(/, */).includes(method), method);
      assert.match(response.headers.get("access-control-allow-headers") ?? "", /x-api-key/);
    }
  });

  it("CORS exposes the headers clients read", async () => {
    const response = await fetch(`${berth.url}/ok`, { headers: { origin: "http://example.test" } });
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.match(response.headers.get("access-control-expose-headers") ?? "", /content-location/);
  });
});
