// The API suites that exercise every route and method, run again with a pass-through `http.app` in front of the API
// (each fixture's langgraph.app.json): a project's app must change nothing about how Berth's own routes answer.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, FIXTURES, startBerth } from "@berth/test-support";

process.env.BERTH_TEST_HTTP_APP = "1";

describe("behind a pass-through http.app", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  it("serves the fixtures' graphs through the app", async () => {
    const response = await fetch(`${berth.url}/assistants/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ limit: 100 }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-pass-through-app"), "on", "the app is in front of the API");
    const graphs = new Set(((await response.json()) as { graph_id: string }[]).map((assistant) => assistant.graph_id));
    assert.ok(graphs.has("agent") && graphs.has("blocking"));
  });

  it("passes a DELETE's JSON body on to the API (the SDK's store.deleteItem)", async () => {
    const namespace = ["behind-app", crypto.randomUUID()];
    await berth.client.store.putItem(namespace, "gone", { value: 1 });
    await berth.client.store.deleteItem(namespace, "gone");
    assert.equal(await berth.client.store.getItem(namespace, "gone"), null);
  });

  it("keeps each langgraph.app.json the same project as its langgraph.json", () => {
    for (const fixture of ["graphs", "store-app", "crons"]) {
      const read = (file: string) => JSON.parse(readFileSync(join(FIXTURES, fixture, file), "utf8")) as Record<string, unknown>;
      const { http, ...behindApp } = read("langgraph.app.json");
      assert.deepEqual(http, { app: "../pass-through-app/app.ts:app" }, fixture);
      assert.deepEqual(behindApp, read("langgraph.json"), `${fixture}: langgraph.app.json differs only by http.app`);
    }
  });
});

await import("./assistants.test.js");
await import("./threads.test.js");
await import("./runs.test.js");
await import("./state.test.js");
await import("./store.test.js");
await import("./crons.test.js");
await import("./protocol-v2.test.js");
