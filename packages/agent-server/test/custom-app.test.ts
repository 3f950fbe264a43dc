import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type BerthProcess, request, runBerthExpectingFailure, startBerth } from "@berth/test-support";

const USER = { authorization: "Bearer user-ann" };

type Echo = { text: string; reply: string };

describe("http.app: the project's routes and middleware in front of the API", () => {
  let berth: BerthProcess;
  let client: Client;
  before(async () => {
    berth = await startBerth({ project: "custom-app" });
    client = new Client({ apiUrl: berth.url, defaultHeaders: USER });
  });
  after(() => berth.stop());

  it("no longer warns that http.app is ignored", () => {
    assert.doesNotMatch(berth.output(), /http\.app\\" is ignored/);
  });

  it("serves the project's route, without Berth's authentication by default", async () => {
    const response = await request(berth.url, "GET", "/hello");
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { hello: "world", user: null });
    assert.equal(response.headers.get("x-custom-app"), "on");
  });

  it("a project's route shadows Berth's", async () => {
    const response = await request(berth.url, "GET", "/info");
    assert.deepEqual(response.body, { shadowed: true });
  });

  it("Berth's routes keep Berth's authentication", async () => {
    const refused = await request(berth.url, "POST", "/threads", {});
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("x-custom-app"), "on", "the middleware wraps the refusal too");
  });

  it("/ok answers", async () => {
    const response = await request(berth.url, "GET", "/ok");
    assert.equal(response.status, 200);
  });

  it("the middleware's header is on Berth's responses", async () => {
    const thread = await client.threads.create();
    const response = await request(berth.url, "GET", `/threads/${thread.thread_id}`, undefined, USER);
    assert.equal(response.status, 200);
    assert.equal((response.body as { thread_id: string }).thread_id, thread.thread_id);
    assert.equal(response.headers.get("x-custom-app"), "on");
  });

  it("runs.wait: the graph gets the body as the middleware rewrote it", async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "echo", { input: { text: "hello" } })) as Echo;
    assert.equal(values.reply, "first:HELLO|second");
  });

  it("runs.stream: events arrive one by one, rewritten input, the middleware's header on the stream", async () => {
    const thread = await client.threads.create();
    const updates: unknown[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "echo", {
      input: { text: "stream me" },
      streamMode: "updates",
    })) {
      if (part.event === "updates") updates.push(part.data);
    }
    assert.deepEqual(updates, [{ first: { reply: "first:STREAM ME" } }, { second: { reply: "first:STREAM ME|second" } }]);

    const response = await fetch(`${berth.url}/runs/stream`, {
      method: "POST",
      headers: { ...USER, "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "echo", input: { text: "raw" }, stream_mode: ["values"] }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-custom-app"), "on");
    assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/);
    const text = await response.text();
    assert.match(text, /first:RAW\|second/);
  });
});

describe("http.app with enable_custom_route_auth", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "custom-app-route-auth" });
  });
  after(() => berth.stop());

  it("the project's routes need Berth's credentials", async () => {
    const refused = await request(berth.url, "GET", "/hello");
    assert.equal(refused.status, 401);
    const served = await request(berth.url, "GET", "/hello", undefined, USER);
    assert.equal(served.status, 200);
    assert.deepEqual(served.body, { hello: "world", user: USER.authorization });
  });

  it("Berth's routes still work through the app", async () => {
    const client = new Client({ apiUrl: berth.url, defaultHeaders: USER });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "echo", { input: { text: "auth" } })) as Echo;
    assert.equal(values.reply, "first:AUTH|second");
    assert.equal((await request(berth.url, "GET", "/ok")).status, 200);
  });
});

describe("a broken http.app", () => {
  it("stops the start naming the file and the export", async () => {
    const { code, output } = await runBerthExpectingFailure({ project: "custom-app-broken" });
    assert.equal(code, 1);
    assert.match(output, /failed to load http\.app from [^"]*custom-app\/app\.ts \(export \\?"missing\\?"\)/);
  });
});
