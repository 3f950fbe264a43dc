// Code running inside Berth reaches the server it runs in: an SDK Client made with no URL (in a graph and in an
// http.app route), and a run's webhook that names a path of the project's http.app.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type BerthProcess, request, startBerth } from "@berth/test-support";

const KEY = `key-${crypto.randomUUID()}`;
const WITH_KEY = { "x-api-key": KEY };

type Reply = { text: string; reply: string };

describe("code inside the server reaches its own server", () => {
  let berth: BerthProcess;
  let client: Client;
  before(async () => {
    // As behind the control plane: a server key on every request. The project's LangSmith key is not that key.
    berth = await startBerth({ project: "own-server", env: { BERTH_API_KEY: KEY, LANGSMITH_API_KEY: "lsv2-not-this-server" } });
    client = new Client({ apiUrl: berth.url, apiKey: KEY });
  });
  after(() => berth.stop());

  it("an http.app route runs a graph with new Client()", async () => {
    const response = await request(berth.url, "POST", "/custom/call", { text: "from a route" }, WITH_KEY);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(response.body, { text: "from a route", reply: "simple:from a route" });
  });

  it("a graph's node runs another graph with new Client()", async () => {
    const values = (await client.runs.wait(null, "caller", { input: { text: "from a graph" } })) as Reply;
    assert.equal(values.reply, "caller got simple:from a graph");
  });

  it("delivers a webhook that names a path of the project's http.app to that route", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent_simple", {
      input: { text: "hook" },
      webhook: "/custom/webhook",
    });
    const received = await request(berth.url, "GET", `/custom/webhook/${run.run_id}`, undefined, WITH_KEY);
    assert.equal(received.status, 200, JSON.stringify(received.body));
    const { body, headers } = received.body as { body: Record<string, unknown>; headers: Record<string, string> };
    assert.equal(body.run_id, run.run_id);
    assert.equal(body.thread_id, thread.thread_id);
    assert.equal(body.status, "success");
    assert.deepEqual(body.values, { text: "hook", reply: "simple:hook" });
    assert.equal((body.kwargs as { webhook: string }).webhook, "/custom/webhook");
    assert.equal(headers["user-agent"], "berth-webhook");
  });

  it("a webhook path reaches the project's routes only, never Berth's API behind them", async () => {
    const threads = await client.threads.count();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent_simple", { input: { text: "x" }, webhook: "/threads" });
    await client.runs.join(thread.thread_id, run.run_id);
    const path = `/threads/${thread.thread_id}/runs/${run.run_id}/webhook`;
    // The attempt is recorded after the run ended, with nothing to await: poll its record.
    let delivery = (await request(berth.url, "GET", path, undefined, WITH_KEY)).body as { status: string; last_status: number };
    for (let tries = 0; delivery.status === "pending" && tries < 300; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      delivery = (await request(berth.url, "GET", path, undefined, WITH_KEY)).body as typeof delivery;
    }
    assert.equal(delivery.status, "failed", JSON.stringify(delivery));
    assert.equal(delivery.last_status, 404);
    assert.equal(await client.threads.count(), threads + 1, "the delivery made no thread");
  });

  it("still refuses webhooks that are neither http(s) URLs nor paths", async () => {
    for (const webhook of ["ftp://example.com/hook", "//example.com/hook", "custom/webhook", "javascript:alert(1)"]) {
      const response = await request(
        berth.url,
        "POST",
        "/runs",
        { assistant_id: "agent_simple", input: { text: "x" }, webhook },
        WITH_KEY,
      );
      assert.equal(response.status, 422, webhook);
      const detail = (response.body as { detail: { loc: string[] }[] }).detail;
      assert.deepEqual(detail[0]?.loc, ["body", "webhook"], webhook);
    }
  });
});
