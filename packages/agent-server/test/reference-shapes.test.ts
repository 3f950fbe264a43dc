import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";
import { sseEvents } from "./helpers/sse.js";

type Dict = Record<string, unknown>;

/**
 * Shapes a client sees, checked against what the reference server
 * (@langchain/langgraph-api) answers on the same graphs (test/fixtures/shapes).
 */
describe("shapes as the reference server gives them", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "shapes" });
  });
  after(() => berth.stop());

  async function stream(assistant: string, streamMode: string[]): Promise<{ event: string; data: unknown }[]> {
    const thread = await berth.client.threads.create();
    const response = await fetch(`${berth.url}/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        assistant_id: assistant,
        input: { messages: [{ type: "human", content: "hi" }] },
        stream_mode: streamMode,
      }),
    });
    const events: { event: string; data: unknown }[] = [];
    for await (const { event, data } of sseEvents(response.body!)) events.push({ event, data });
    return events;
  }

  it("messages mode: partials of a streamed AI message are typed ai and keep tool_call_chunks", async () => {
    const events = await stream("tools_chat", ["messages"]);
    const partials = events.filter((event) => event.event === "messages/partial").map((event) => (event.data as Dict[])[0]!);
    assert.equal(partials.length, 2);
    for (const partial of partials) {
      assert.equal(partial.type, "ai");
      assert.ok(Array.isArray(partial.tool_call_chunks), JSON.stringify(partial));
    }
    assert.equal(partials.at(-1)!.content, "Hello");
    assert.deepEqual(
      events.map((event) => event.event),
      ["metadata", "messages/complete", "messages/metadata", "messages/partial", "messages/partial", "messages/complete"],
    );
  });

  it("messages mode on an interrupting graph: a node's whole message completes from the state, unannounced", async () => {
    const events = await stream("interrupting", ["messages"]);
    assert.deepEqual(
      events.map((event) => event.event),
      ["metadata", "messages/complete", "messages/complete"],
    );
    const [draft] = events[2]!.data as Dict[];
    assert.deepEqual([draft!.id, draft!.type, draft!.content], ["draft-1", "ai", "draft"]);
  });

  it("messages omit the optional fields they do not have (no name: null on a human message)", async () => {
    const thread = await berth.client.threads.create();
    await berth.client.runs.wait(thread.thread_id, "interrupting", { input: { messages: [{ type: "human", content: "hi" }] } });
    const state = await berth.client.threads.getState<{ messages: Dict[] }>(thread.thread_id);
    const [human, draft] = state.values.messages;
    assert.deepEqual(Object.keys(human!).sort(), ["additional_kwargs", "content", "id", "response_metadata", "type"]);
    assert.deepEqual(Object.keys(draft!).sort(), [
      "additional_kwargs",
      "content",
      "id",
      "invalid_tool_calls",
      "response_metadata",
      "tool_calls",
      "type",
    ]);
  });

  it("a subgraph task of the thread state names its checkpoint namespace: {thread_id, checkpoint_ns}", async () => {
    const thread = await berth.client.threads.create({ graphId: "nested" });
    await berth.client.threads.updateState(thread.thread_id, { values: { log: ["start"] }, asNode: "__start__" });
    const state = await request(berth.url, "GET", `/threads/${thread.thread_id}/state`);
    const [task] = (state.body as { tasks: { name: string; checkpoint: Dict | null }[] }).tasks;
    assert.equal(task!.name, "child");
    assert.equal(task!.checkpoint?.thread_id, thread.thread_id);
    assert.match(String(task!.checkpoint?.checkpoint_ns), /^child:[0-9a-f-]{36}$/);
  });

  it("config.recursion_limit (the API's snake_case) reaches LangGraph: a two-step graph with a limit of 1 fails", async () => {
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "two_steps", {
      input: { messages: [] },
      config: { recursion_limit: 1 },
    });
    const output = (await berth.client.runs.join(thread.thread_id, run.run_id)) as { __error__?: { error: string } };
    assert.equal(output.__error__?.error, "GraphRecursionError");
    assert.equal((await berth.client.runs.get(thread.thread_id, run.run_id)).status, "error");
    assert.equal((await berth.client.threads.get(thread.thread_id)).status, "error");
    const generous = await berth.client.runs.wait(null, "two_steps", { input: { messages: [] }, config: { recursion_limit: 5 } });
    assert.equal((generous as { messages: unknown[] }).messages.length, 2);
  });

  it("a run's metadata carries what the reference adds: run_attempt, langgraph_version, langgraph_plan, langgraph_host", async () => {
    const thread = await berth.client.threads.create();
    await berth.client.runs.wait(thread.thread_id, "two_steps", {
      input: { messages: [] },
      config: { tags: ["t1"] },
      metadata: { m: 1 },
    });
    const state = await berth.client.threads.getState(thread.thread_id);
    const metadata = state.metadata as Dict;
    assert.equal(metadata.run_attempt, 1);
    assert.match(String(metadata.langgraph_version), /^\d+\.\d+\.\d+/);
    assert.deepEqual([metadata.langgraph_plan, metadata.langgraph_host, metadata.m], ["developer", "self-hosted", 1]);
  });

  it("a run's metadata names the server it runs on (langgraph_api_url): in messages-tuple events and the thread state", async () => {
    const thread = await berth.client.threads.create({ metadata: { owner: "o1" } });
    const chunks = [];
    for await (const chunk of berth.client.runs.stream(thread.thread_id, "tools_chat", {
      input: { messages: [{ type: "human", content: "hi" }] },
      streamMode: ["messages-tuple"],
      metadata: { m: 1 },
    })) {
      chunks.push(chunk);
    }
    const tuples = chunks.filter((chunk) => chunk.event === "messages").map((chunk) => (chunk.data as [Dict, Dict])[1]);
    assert.ok(tuples.length > 0, JSON.stringify(chunks));
    // The keys the reference gives a chat model's tokens: the run's metadata (assistant < thread < run), what the server
    // adds, and LangGraph's own (langgraph_node, checkpoint_ns...).
    const expected = {
      m: 1,
      owner: "o1",
      graph_id: "tools_chat",
      thread_id: thread.thread_id,
      run_attempt: 1,
      langgraph_plan: "developer",
      langgraph_host: "self-hosted",
      langgraph_api_url: berth.url,
      langgraph_node: "agent",
    };
    for (const metadata of tuples) {
      for (const [key, value] of Object.entries(expected))
        assert.deepEqual(metadata[key], value, `${key} in ${JSON.stringify(metadata)}`);
      for (const key of [
        "langgraph_version",
        "langgraph_step",
        "langgraph_triggers",
        "langgraph_path",
        "checkpoint_ns",
        "run_id",
      ]) {
        assert.ok(key in metadata, `${key} in ${JSON.stringify(metadata)}`);
      }
    }
    const state = await berth.client.threads.getState(thread.thread_id);
    const metadata = state.metadata as Dict;
    assert.equal(metadata.langgraph_api_url, berth.url);
    assert.deepEqual([metadata.m, metadata.owner, metadata.graph_id, metadata.source], [1, "o1", "tools_chat", "loop"]);
  });

  it("a thread run's stream starts as the reference's: id 0, metadata {run_id, attempt}; a stateless run's also names its thread", async () => {
    const thread = await berth.client.threads.create();
    const chunks: { id?: string; event: string; data: unknown }[] = [];
    for await (const chunk of berth.client.runs.stream(thread.thread_id, "two_steps", { input: { messages: [] } })) {
      chunks.push(chunk);
    }
    const runId = (chunks[0]?.data as Dict | undefined)?.run_id;
    assert.deepEqual(chunks[0], { id: "0", event: "metadata", data: { run_id: runId, attempt: 1 } });
    assert.deepEqual(
      chunks.map((chunk) => chunk.id),
      chunks.map((_, index) => String(index)),
    );

    const stateless = [];
    for await (const chunk of berth.client.runs.stream(null, "two_steps", { input: { messages: [] } })) stateless.push(chunk);
    const data = stateless[0]?.data as Dict;
    assert.deepEqual(Object.keys(data).sort(), ["attempt", "run_id", "thread_id"]);
  });

  it("request x-* headers (credentials withheld) and user-agent reach configurable and checkpoint metadata, with ls_integration", async () => {
    const thread = await berth.client.threads.create();
    const response = await fetch(`${berth.url}/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-team": "blue",
        "x-api-key": "secret",
        "x-tenant-id": "t1",
        "user-agent": "probe/1",
      },
      body: JSON.stringify({ assistant_id: "config_echo", input: {}, config: { configurable: { model: "m1" } } }),
    });
    assert.equal(response.status, 200);
    const { seen } = (await response.json()) as { seen: { metadata: Dict; configurable: Dict } };
    assert.deepEqual(
      [seen.configurable["x-team"], seen.configurable["user-agent"], seen.configurable.model],
      ["blue", "probe/1", "m1"],
    );
    assert.equal(seen.configurable["x-api-key"], undefined);
    assert.equal(seen.configurable["x-tenant-id"], undefined);
    assert.equal(seen.metadata.ls_integration, "langgraph");
    const metadata = (await berth.client.threads.getState(thread.thread_id)).metadata as Dict;
    assert.deepEqual(
      [metadata["x-team"], metadata["user-agent"], metadata.model, metadata.ls_integration],
      ["blue", "probe/1", "m1", "langgraph"],
    );
    assert.equal(metadata["x-api-key"], undefined);
  });
});
