// Code running inside Berth reaches the server it runs in: an SDK Client made with no URL (in a graph and in an
// http.app route).
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
});
