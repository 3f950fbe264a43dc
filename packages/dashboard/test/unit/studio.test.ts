import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Drawing, layOut, nodeOfEvent, shownId } from "../../src/studio/graph-layout.js";
import { NO_RUN, runningNodes, runReducer } from "../../src/studio/run-state.js";
import { formFields, parseObject, schemaErrors } from "../../src/studio/schema.js";

describe("the Studio's graph, checks and run, as functions", () => {
  // The drawing the agent server gives for fixtures/studio-app's graph with xray.
  const drawing: Drawing = {
    nodes: ["__start__", "plan", "research:search", "research:summarize", "write", "review", "__end__"].map((id) => ({ id })),
    edges: [
      { source: "__start__", target: "plan", conditional: false },
      { source: "plan", target: "research:search", conditional: true },
      { source: "plan", target: "write", conditional: true },
      { source: "research:search", target: "research:summarize", conditional: false },
      { source: "research:summarize", target: "write", conditional: false },
      { source: "write", target: "review", conditional: false },
      { source: "review", target: "__end__", conditional: false },
    ],
  };
  const edgesOf = (expanded: string[]) =>
    layOut(drawing, new Set(expanded)).edges.map((edge) => `${edge.source}${edge.conditional ? " ~> " : " -> "}${edge.target}`);

  test("a folded subgraph is one node; expanded, a group holding its nodes, listed before them", () => {
    const folded = layOut(drawing, new Set());
    assert.deepEqual(
      folded.nodes.map((node) => `${node.id}:${node.kind}`),
      ["__start__:terminal", "plan:node", "research:subgraph", "write:node", "review:node", "__end__:terminal"],
    );
    assert.deepEqual(edgesOf([]), [
      "__start__ -> plan",
      "plan ~> research",
      "plan ~> write",
      "research -> write",
      "write -> review",
      "review -> __end__",
    ]);
    const open = layOut(drawing, new Set(["research"]));
    const ids = open.nodes.map((node) => node.id);
    assert.ok(ids.indexOf("research") < ids.indexOf("research:search"), "the group comes before its children");
    assert.equal(open.nodes.find((node) => node.id === "research")?.kind, "group");
    assert.equal(open.nodes.find((node) => node.id === "research:search")?.parent, "research");
    assert.ok(edgesOf(["research"]).includes("plan ~> research:search"));
    // Top to bottom: every edge but the conditional skip goes down.
    const y = new Map(folded.nodes.map((node) => [node.id, node.y]));
    assert.ok(y.get("plan")! < y.get("research")! && y.get("research")! < y.get("write")!);
  });

  test("a streamed event names its node by the subgraphs of its namespace", () => {
    assert.equal(nodeOfEvent("tasks", "plan"), "plan");
    assert.equal(nodeOfEvent("updates|research:1f0e-task", "search"), "research:search");
    assert.equal(shownId("research:search", new Set()), "research");
    assert.equal(shownId("research:search", new Set(["research"])), "research:search");
  });

  test("tasks mark a node running then done, updates give its latest write, the end settles the rest", () => {
    const events: [string, unknown][] = [
      ["metadata", { run_id: "r1" }],
      ["tasks", { id: "1", name: "plan", input: {}, triggers: [] }],
    ];
    let run = runReducer(NO_RUN, { kind: "start", threadId: "t" });
    for (const [event, data] of events) run = runReducer(run, { kind: "part", event, data });
    assert.deepEqual(runningNodes(run), ["plan"]);
    assert.equal(run.runId, "r1");
    run = runReducer(run, { kind: "part", event: "updates", data: { plan: { route: "research" } } });
    run = runReducer(run, { kind: "part", event: "tasks", data: { id: "1", name: "plan", result: {}, error: null } });
    run = runReducer(run, { kind: "part", event: "tasks|research:2", data: { id: "3", name: "search", input: {} } });
    assert.equal(run.nodes.plan?.status, "done");
    assert.deepEqual(run.nodes.plan?.update, { route: "research" });
    assert.deepEqual(runningNodes(run), ["research:search"]);
    run = runReducer(run, { kind: "part", event: "tasks", data: { id: "4", name: "review", interrupts: [{ value: 1 }] } });
    assert.equal(run.nodes.review?.status, "interrupted");
    run = runReducer(run, { kind: "end" });
    assert.deepEqual(runningNodes(run), [], "no node runs once the stream ended");
  });

  test("a chat model's tokens add up on the node that called it, until the node runs again", () => {
    const token = (content: unknown) => ({
      kind: "part" as const,
      event: "messages|research:7",
      data: [{ type: "AIMessageChunk", content, id: "m" }, { langgraph_node: "search" }],
    });
    let run = runReducer(NO_RUN, { kind: "start", threadId: "t" });
    run = runReducer(run, token("Hel"));
    run = runReducer(run, token([{ type: "text", text: "lo" }]));
    assert.deepEqual(run.nodes["research:search"], { status: "running", streamed: "Hello" });
    run = runReducer(run, { kind: "part", event: "tasks|research:7", data: { id: "1", name: "search", input: {} } });
    assert.equal(run.nodes["research:search"]?.streamed, undefined);
  });

  test("a config is checked one level deep against its schema; flat properties make a form", () => {
    const schema = {
      type: "object",
      properties: { user_name: { type: "string" }, count: { type: "integer" }, mode: { enum: ["a", "b"], type: "string" } },
      required: ["user_name"],
    };
    assert.deepEqual(schemaErrors({ user_name: "Ada", count: 2 }, schema), []);
    assert.deepEqual(schemaErrors({ count: 1.5, mode: "c" }, schema), [
      '"user_name" is required',
      '"count" must be integer, not number',
      '"mode" must be one of "a", "b"',
    ]);
    assert.deepEqual(schemaErrors([1], schema), ["must be object, not array"]);
    assert.deepEqual(parseObject(""), { value: {} });
    assert.ok("error" in parseObject("{"));
    assert.deepEqual(
      formFields(schema).map((field) => `${field.name}:${field.kind}${field.required ? "!" : ""}`),
      ["user_name:string!", "count:integer", "mode:string"],
    );
  });
});
