import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type BerthProcess, REPO_ROOT, startBerth } from "@berth/test-support";

describe("BERTH_API_KEY", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ env: { BERTH_API_KEY: "s3cret-key" } });
  });
  after(() => berth?.stop());

  const call = (headers: Record<string, string>) => fetch(`${berth.url}/threads`, { method: "POST", headers });

  test("every request needs the key, except /ok and the API's docs", async () => {
    assert.equal((await fetch(`${berth.url}/ok`)).status, 200);
    for (const open of ["/openapi.json", "/docs/", "/docs/json", "/docs/static/swagger-ui.css"]) {
      assert.equal((await fetch(`${berth.url}${open}`)).status, 200, open);
    }
    assert.equal((await fetch(`${berth.url}/docs`, { redirect: "manual" })).headers.get("location"), "docs/");
    assert.equal((await fetch(`${berth.url}/docsx`)).status, 401, "only the docs' own paths are open");
    const missing = await call({});
    assert.equal(missing.status, 401);
    assert.match(((await missing.json()) as { detail: string }).detail, /Missing API key/);
    const wrong = await call({ "x-api-key": "guess" });
    assert.equal(wrong.status, 401);
    assert.deepEqual(await wrong.json(), { detail: "Invalid API key" });
    assert.equal((await call({ "x-api-key": "s3cret-key" })).status, 200);
    assert.equal((await call({ authorization: "Bearer s3cret-key" })).status, 200);
  });

  test("the SDK's apiKey is the key", async () => {
    const thread = await new Client({ apiUrl: berth.url, apiKey: "s3cret-key" }).threads.create();
    assert.ok(thread.thread_id);
    await assert.rejects(new Client({ apiUrl: berth.url, apiKey: "nope" }).threads.create(), /401/);
  });

  test("a refused browser request still gets CORS headers", async () => {
    const response = await fetch(`${berth.url}/threads`, { method: "POST", headers: { origin: "https://app.example" } });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
  });
});

test("berth dev refuses to listen beyond loopback", async () => {
  const child = spawn(
    process.execPath,
    [join(REPO_ROOT, "packages/cli/bin/berth.mjs"), "dev", "--host", "0.0.0.0", "--port", "0"],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number];
  assert.equal(code, 2);
  assert.match(stderr, /loopback only/);
  assert.match(stderr, /BERTH_API_KEY/);
});
