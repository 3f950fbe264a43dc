import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { AIMessage, AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import type { StreamEvent } from "@langchain/core/tracers/log_stream";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import {
  END,
  type LangGraphRunnableConfig,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
  type StreamMode as GraphStreamMode,
  interrupt,
} from "@langchain/langgraph";
import { type EncodedEvent, StreamEncoder } from "../../src/runs/streaming/stream-encoder.js";
import { STREAM_MODES, type StreamMode, graphStreamModes } from "../../src/runs/streaming/stream-modes.js";

type Dict = Record<string, unknown>;

const TOKENS = ["Hello", ", ", "world", "!"];
const ANSWER = TOKENS.join("");

/**
 * A model that answers ANSWER: streamed as TOKENS, one chunk each, when it is
 * streamed, which LangGraph's messages mode makes it do even under `.invoke`.
 */
function tokenModel() {
  return new FakeStreamingChatModel({
    chunks: TOKENS.map((content) => new AIMessageChunk({ content })),
    responses: [new AIMessage(ANSWER)],
  });
}

/** START -> agent (one model call) -> END. */
function chatGraph(call: "stream" | "invoke") {
  const model = tokenModel();
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config) => {
      if (call === "invoke") return { messages: [await model.invoke(state.messages, config)] };
      let answer: AIMessageChunk | undefined;
      for await (const chunk of await model.stream(state.messages, config)) {
        answer = answer ? answer.concat(chunk) : chunk;
      }
      return { messages: [answer!] };
    })
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: new MemorySaver() });
}

/** START -> agent -> writer (custom) -> child (a subgraph, which writes custom too) -> END. */
function fullGraph() {
  const model = tokenModel();
  const child = new StateGraph(MessagesAnnotation)
    .addNode("inner", async (_state, config: LangGraphRunnableConfig) => {
      config.writer?.({ from: "inner" });
      return { messages: [{ role: "ai", content: "from child", id: "child-msg" }] };
    })
    .addEdge(START, "inner")
    .compile();
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addNode("writer", async (_state, config: LangGraphRunnableConfig) => {
      config.writer?.({ progress: "half" });
      return {};
    })
    .addNode("child", child)
    .addEdge(START, "agent")
    .addEdge("agent", "writer")
    .addEdge("writer", "child")
    .addEdge("child", END)
    .compile({ checkpointer: new MemorySaver() });
}

/** START -> ask (interrupts) -> END. */
function hitlGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", async () => ({ messages: [{ role: "human", content: String(interrupt({ question: "ok?" })) }] }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: new MemorySaver() });
}

/** What the helpers use of a compiled graph (the builders' return types differ in their state generics). */
interface Graph {
  stream(input: unknown, options: Dict): Promise<AsyncIterable<unknown>>;
  streamEvents(input: unknown, options: Dict & { version: "v2" }): AsyncIterable<StreamEvent>;
}

const input = () => ({ messages: [new HumanMessage({ content: "hi", id: "human-1" })] });

/** Runs `graph.stream` the way the executor does and encodes every chunk. */
async function encodeStream(graph: Graph, requested: StreamMode[], subgraphs = false): Promise<EncodedEvent[]> {
  const encoder = new StreamEncoder(requested, subgraphs);
  const stream = await graph.stream(input(), {
    streamMode: graphStreamModes(requested) as GraphStreamMode[],
    subgraphs,
    configurable: { thread_id: randomUUID() },
  });
  const events: EncodedEvent[] = [];
  for await (const item of stream as AsyncIterable<unknown[]>) {
    const [namespace, mode, chunk] = subgraphs ? item : [[], ...item];
    events.push(...encoder.encode(namespace as string[], mode as string, chunk));
  }
  return events;
}

/** Runs `graph.streamEvents` the way the executor does when `events` is requested. */
async function encodeStreamEvents(graph: Graph, requested: StreamMode[], subgraphs = false) {
  const encoder = new StreamEncoder(requested, subgraphs);
  const events: EncodedEvent[] = [];
  const stream = graph.streamEvents(input(), {
    version: "v2",
    streamMode: graphStreamModes(requested) as GraphStreamMode[],
    subgraphs,
    configurable: { thread_id: randomUUID() },
  });
  for await (const event of stream) events.push(...encoder.encodeStreamEvent(event));
  return { events, encoder };
}

const names = (events: EncodedEvent[]) => events.map((event) => event.event);
const ofName = (events: EncodedEvent[], name: string) => events.filter((event) => event.event === name);
const dataOf = (event: EncodedEvent) => event.data as Dict;

/** Every payload must survive JSON as is: no class instances, no undefined, no cycles. */
function assertJsonSafe(events: EncodedEvent[]) {
  for (const event of events) assert.deepEqual(JSON.parse(JSON.stringify(event.data)), event.data, event.event);
}

/** No LangGraph runtime internals (`__pregel_*` config keys) leak into a payload. */
function assertNoInternals(events: EncodedEvent[]) {
  for (const event of events) assert.doesNotMatch(JSON.stringify(event.data), /"__pregel_\w+":/, event.event);
}

describe("graphStreamModes", () => {
  it("maps API modes to LangGraph modes, always with values, without duplicates", () => {
    assert.deepEqual(graphStreamModes([]), ["values"]);
    assert.deepEqual(graphStreamModes(["values"]), ["values"]);
    assert.deepEqual(graphStreamModes(["messages-tuple"]), ["values", "messages"]);
    assert.deepEqual(graphStreamModes(["messages", "messages-tuple"]), ["values", "messages"]);
    assert.deepEqual(graphStreamModes(["events"]), ["values"]);
    assert.deepEqual(graphStreamModes(["updates", "custom", "debug", "tasks", "checkpoints", "updates"]), [
      "values",
      "updates",
      "custom",
      "debug",
      "tasks",
      "checkpoints",
    ]);
    assert.equal(new Set(STREAM_MODES).size, 9);
  });
});

describe("StreamEncoder over graph.stream", () => {
  it("values only by default: one values event per step with wire messages", async () => {
    for (const requested of [[], ["values"]] as StreamMode[][]) {
      const events = await encodeStream(fullGraph(), requested);
      // Input, agent, child: the writer step writes no channel, and LangGraph emits no values for it.
      assert.deepEqual(names(events), ["values", "values", "values"]);
      const last = dataOf(events.at(-1)!).messages as Dict[];
      assert.deepEqual(
        last.map((message) => [message.type, message.content]),
        [
          ["human", "hi"],
          ["ai", ANSWER],
          ["ai", "from child"],
        ],
      );
      assertJsonSafe(events);
    }
  });

  it("updates: one event per node, internal values swallowed", async () => {
    const events = await encodeStream(fullGraph(), ["updates"]);
    assert.deepEqual(names(events), ["updates", "updates", "updates"]);
    assert.deepEqual(
      events.map((event) => Object.keys(dataOf(event))),
      [["agent"], ["writer"], ["child"]],
    );
    const agent = dataOf(events[0]).agent as { messages: Dict[] };
    assert.equal(agent.messages[0].content, ANSWER);
    assertJsonSafe(events);
  });

  it("updates and values keep __interrupt__", async () => {
    const events = await encodeStream(hitlGraph(), ["updates", "values"]);
    const interrupts = events.filter((event) => "__interrupt__" in dataOf(event));
    assert.deepEqual(names(interrupts), ["updates", "values"]);
    for (const event of interrupts) {
      const [first] = dataOf(event).__interrupt__ as Dict[];
      assert.deepEqual(first.value, { question: "ok?" });
      assert.equal(typeof first.id, "string");
    }
  });

  for (const call of ["stream", "invoke"] as const) {
    it(`messages-tuple: token chunks with metadata (model called with .${call})`, async () => {
      const events = await encodeStream(chatGraph(call), ["messages-tuple"]);
      assert.deepEqual(
        names(events),
        TOKENS.map(() => "messages"),
      );
      const tuples = events.map((event) => event.data as [Dict, Dict]);
      assert.equal(tuples.map(([chunk]) => chunk.content).join(""), ANSWER);
      for (const [chunk, metadata] of tuples) {
        assert.equal(chunk.type, "AIMessageChunk");
        assert.equal(chunk.id, tuples[0][0].id);
        assert.equal(metadata.langgraph_node, "agent");
        assert.equal(metadata.langgraph_step, 1);
      }
      assertJsonSafe(events);
    });
  }

  it("messages (SDK): metadata, accumulating partials, then complete", async () => {
    const events = await encodeStream(chatGraph("stream"), ["messages"]);
    assert.deepEqual(names(events), [
      "messages/complete",
      "messages/metadata",
      ...TOKENS.map(() => "messages/partial"),
      "messages/complete",
    ]);
    const [human] = events[0].data as Dict[];
    assert.deepEqual([human.type, human.id, human.content], ["human", "human-1", "hi"]);
    const id = Object.keys(dataOf(events[1]))[0];
    const { metadata } = dataOf(events[1])[id] as { metadata: Dict };
    assert.equal(metadata.langgraph_node, "agent");
    const partials = ofName(events, "messages/partial").map((event) => (event.data as Dict[])[0]);
    const expected = TOKENS.map((_, i) => TOKENS.slice(0, i + 1).join(""));
    assert.deepEqual(
      partials.map((message) => message.content),
      expected,
    );
    for (const message of partials) {
      // As the reference's toDict() of an accumulated chunk: typed "ai", with its tool_call_chunks.
      assert.deepEqual([message.type, message.id, message.tool_call_chunks], ["ai", id, []]);
    }
    const [answer] = events.at(-1)!.data as Dict[];
    assert.deepEqual([answer.type, answer.id, answer.content], ["ai", id, ANSWER]);
    assertJsonSafe(events);
  });

  it("messages (SDK): a node's whole message completes once, from the state, with no metadata (as the reference)", async () => {
    const events = await encodeStream(fullGraph(), ["messages"]);
    const completed = ofName(events, "messages/complete").map((event) => (event.data as Dict[])[0].id);
    assert.equal(completed.length, new Set(completed).size);
    assert.ok(completed.includes("child-msg"));
    assert.ok(!events.some((event) => event.event === "messages/metadata" && "child-msg" in dataOf(event)));
  });

  it("custom: what nodes write with config.writer", async () => {
    const events = await encodeStream(fullGraph(), ["custom"]);
    assert.deepEqual(events, [
      { event: "custom", data: { progress: "half" } },
      { event: "custom", data: { from: "inner" } },
    ]);
  });

  it("debug: checkpoint, task and task_result events in the API's shape", async () => {
    const events = await encodeStream(fullGraph(), ["debug"], true);
    assert.ok(events.every((event) => event.event.startsWith("debug")));
    const types = new Set(events.map((event) => dataOf(event).type));
    assert.deepEqual([...types].sort(), ["checkpoint", "task", "task_result"]);
    const checkpoint = dataOf(events.find((event) => dataOf(event).type === "checkpoint" && dataOf(event).step === 0)!);
    const payload = checkpoint.payload as Dict;
    assert.ok(!("parentConfig" in payload));
    const keys = ["config", "parent_config", "values", "metadata", "next", "tasks", "checkpoint", "parent_checkpoint"];
    for (const key of keys) assert.ok(key in payload, key);
    assert.equal(typeof (payload.checkpoint as Dict).checkpoint_id, "string");
    assert.equal(typeof checkpoint.timestamp, "string");
    assertNoInternals(events);
    assertJsonSafe(events);
  });

  it("tasks: a start and a result event per node", async () => {
    const events = await encodeStream(fullGraph(), ["tasks"]);
    assert.ok(events.every((event) => event.event === "tasks"));
    const starts = events.filter((event) => "input" in dataOf(event)).map(dataOf);
    const results = events.filter((event) => "result" in dataOf(event)).map(dataOf);
    assert.deepEqual(
      starts.map((task) => task.name),
      ["agent", "writer", "child"],
    );
    assert.deepEqual(
      results.map((task) => task.name),
      ["agent", "writer", "child"],
    );
    for (const task of starts) {
      const keys = Object.keys(task).filter((key) => key !== "metadata");
      assert.deepEqual(keys.sort(), ["id", "input", "interrupts", "name", "triggers"]);
    }
    for (const task of results) assert.equal(task.error, null);
    assertJsonSafe(events);
  });

  it("checkpoints: values, next, config, metadata, tasks for each checkpoint", async () => {
    const events = await encodeStream(fullGraph(), ["checkpoints"], true);
    const root = ofName(events, "checkpoints").map(dataOf);
    assert.deepEqual(
      root.map((checkpoint) => checkpoint.next),
      [["__start__"], ["agent"], ["writer"], ["child"], []],
    );
    for (const checkpoint of root) {
      for (const key of ["values", "next", "config", "metadata", "tasks", "parent_config", "checkpoint"]) {
        assert.ok(key in checkpoint, key);
      }
    }
    const childTask = (root[3].tasks as Dict[])[0];
    assert.equal((childTask.checkpoint as Dict).checkpoint_ns, `child:${childTask.id}`);
    assert.ok(events.some((event) => /^checkpoints\|child:/.test(event.event)));
    assertNoInternals(events);
    assertJsonSafe(events);
  });

  it("subgraphs: namespaced events are named mode|node:task_id", async () => {
    const events = await encodeStream(fullGraph(), ["values", "custom"], true);
    const namespaced = events.filter((event) => event.event.includes("|"));
    assert.ok(namespaced.length > 0);
    for (const event of namespaced) assert.match(event.event, /^(values|custom)\|child:[0-9a-f-]{36}$/);
    assert.ok(namespaced.some((event) => event.event.startsWith("values|child:")));
    assert.equal(ofName(events, "values").length, 3);
    const flat = await encodeStream(fullGraph(), ["values", "custom"], false);
    assert.ok(flat.every((event) => !event.event.includes("|")));
  });
});

describe("StreamEncoder over graph.streamEvents", () => {
  it("events: every visible event, plus the requested modes from the root's stream chunks", async () => {
    const { events, encoder } = await encodeStreamEvents(fullGraph(), ["events", "values"]);
    assert.equal(ofName(events, "values").length, 3);
    const streamed = ofName(events, "events").map(dataOf);
    const kinds = new Set(streamed.map((event) => event.event));
    const expected = ["on_chain_start", "on_chain_end", "on_chat_model_start", "on_chat_model_stream", "on_chat_model_end"];
    for (const kind of expected) assert.ok(kinds.has(kind), kind);
    assert.ok(streamed.every((event) => !(event.tags as string[]).includes("langsmith:hidden")));
    // The root graph's own stream chunks became `values` events, not `events`.
    assert.ok(!streamed.some((event) => event.event === "on_chain_stream" && event.name === "LangGraph"));
    const tokens = streamed
      .filter((event) => event.event === "on_chat_model_stream")
      .map((event) => (event.data as Dict).chunk as Dict);
    assert.equal(tokens.map((chunk) => chunk.content).join(""), ANSWER);
    assert.equal(tokens[0].type, "AIMessageChunk");
    assert.equal(((encoder.lastRootValues as Dict).messages as unknown[]).length, 3);
    assertJsonSafe(events);
  });

  it("events alone swallows the internal values; other modes come through", async () => {
    const alone = await encodeStreamEvents(fullGraph(), ["events"]);
    assert.ok(alone.events.every((event) => event.event === "events"));
    const mixed = await encodeStreamEvents(chatGraph("invoke"), ["events", "messages-tuple", "updates"]);
    assert.equal(ofName(mixed.events, "messages").length, TOKENS.length);
    assert.deepEqual(
      ofName(mixed.events, "updates").map((event) => Object.keys(dataOf(event))),
      [["agent"]],
    );
  });

  it("events with subgraphs: namespaced modes, no checkpoint envelopes", async () => {
    const { events } = await encodeStreamEvents(fullGraph(), ["events", "values", "custom"], true);
    assert.ok(events.some((event) => /^values\|child:/.test(event.event)));
    assert.ok(events.some((event) => /^custom\|child:/.test(event.event)));
    assert.ok(!events.some((event) => event.event.startsWith("checkpoints")));
    assertNoInternals(events);
    assertJsonSafe(events);
  });
});
