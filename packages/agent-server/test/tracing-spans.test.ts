import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type Api, api, type BerthProcess, type ControlPlane, startBerth, startControlPlane } from "@berth/test-support";
import { tracingEnv } from "./helpers/tracing.js";

// What the tracing service holds of a run traced by Berth's tracer (docs/tracing.md): every kind of span, with what
// the dashboard's trace waterfall and span panel show (kind, name, times, status, tokens, inputs/outputs/error, metadata).

interface TracedRun {
  id: string;
  trace_id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  name: string | null;
  run_type: string | null;
  status: string;
  start_time: string | null;
  end_time: string | null;
  inputs: Record<string, unknown> | null;
  outputs: Record<string, unknown> | null;
  error: string | null;
  extra: { metadata?: Record<string, unknown> } | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  child_runs: TracedRun[];
}

async function tree(reader: Api, runId: string): Promise<TracedRun> {
  const response = await reader.get<TracedRun>(`/api/v1/runs/${runId}/tree`);
  assert.equal(response.status, 200, `tree of ${runId}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

function flatten(run: TracedRun): TracedRun[] {
  return [run, ...run.child_runs.flatMap(flatten)];
}

function only(runs: TracedRun[], name: string): TracedRun {
  const found = runs.filter((run) => run.name === name);
  assert.equal(found.length, 1, `one span named ${name}: ${runs.map((run) => run.name).join(", ")}`);
  return found[0];
}

describe("tracing: the spans of a run, as the tracing service keeps them", () => {
  let cp: ControlPlane;
  let berth: BerthProcess;
  let reader: Api;
  const project = `spans-${randomUUID().slice(0, 8)}`;

  before(async () => {
    cp = await startControlPlane();
    reader = api(cp.url, cp.adminKey);
    berth = await startBerth({ project: "tracing-spans", env: tracingEnv(`${cp.url}/api/v1`, cp.adminKey, project) });
  });
  after(async () => {
    await berth?.stop();
    await cp?.stop();
  });

  it("a model call with its tokens, a tool call, a traceable nested in its node, a failed run's error; ids on every span", async () => {
    const thread = await berth.client.threads.create();
    const ok = await berth.client.runs.create(thread.thread_id, "spans", { input: { text: "hello" } });
    await berth.client.runs.join(thread.thread_id, ok.run_id);
    const failed = await berth.client.runs.create(thread.thread_id, "spans", { input: { text: "again", fail: true } });
    await berth.client.runs.join(thread.thread_id, failed.run_id);
    // A stopping process sends the spans it still holds: once stopped, every span is in.
    await berth.stop();
    assert.doesNotMatch(berth.output(), /pending traces not sent/);

    const root = await tree(reader, ok.run_id);
    const spans = flatten(root);
    assert.deepEqual(
      spans.map((span) => span.name).sort(),
      ["LangGraph", "UsageModel", "__start__", "add", "model", "shout", "tool", "traced"].sort(),
    );
    assert.equal(root.parent_run_id, null);
    assert.equal(root.run_type, "chain");
    assert.equal(root.status, "success");
    assert.deepEqual(root.inputs, { text: "hello" });
    assert.equal(root.outputs?.loud, "HI", "the root's outputs are the graph's final state");
    for (const span of spans) {
      assert.equal(span.trace_id, ok.run_id, `${span.name} is in the run's trace`);
      assert.ok(span.start_time && span.end_time, `${span.name} has its times`);
      assert.ok(Date.parse(span.end_time!) >= Date.parse(span.start_time!), `${span.name} ends after it starts`);
      assert.equal(span.status, "success", `${span.name} succeeded`);
      if (span.parent_run_id) {
        const parent = spans.find((candidate) => candidate.id === span.parent_run_id)!;
        assert.ok(span.dotted_order?.startsWith(`${parent.dotted_order}.`), `${span.name} is ordered under ${parent.name}`);
      }
      if (span.name === "shout") continue; // langsmith's own client sent it, without Berth's ids
      const metadata = span.extra?.metadata ?? {};
      assert.equal(metadata.run_id, ok.run_id, `${span.name} carries the run id`);
      assert.equal(metadata.thread_id, thread.thread_id, `${span.name} carries the thread id`);
      assert.equal(metadata.assistant_id, ok.assistant_id, `${span.name} carries the assistant id`);
      assert.equal(metadata.run_attempt, 1, `${span.name} carries the attempt`);
    }

    const llm = only(spans, "UsageModel");
    assert.equal(llm.run_type, "llm");
    assert.equal(only(spans, "model").id, llm.parent_run_id, "the model call is a child of its node");
    assert.deepEqual([llm.prompt_tokens, llm.completion_tokens, llm.total_tokens], [7, 5, 12]);
    // Messages as LangChain serialises them (what LangSmith's own tracer sends).
    type Serialised = { lc: number; type: string; id: string[]; kwargs: { content: unknown } };
    const messages = llm.inputs?.messages as Serialised[][] | undefined;
    assert.ok(messages, "a chat model's inputs are its messages");
    const [[prompt]] = messages;
    assert.deepEqual(
      { lc: prompt.lc, type: prompt.type, id: prompt.id, content: prompt.kwargs.content },
      { lc: 1, type: "constructor", id: ["langchain_core", "messages", "HumanMessage"], content: "hello" },
      "a chat model's inputs are its messages, serialised by LangChain",
    );
    assert.match(JSON.stringify(llm.outputs), /"hi"/);
    assert.equal(only(spans, "model").extra?.metadata?.langgraph_node, "model", "LangGraph's metadata is kept");

    const toolSpan = only(spans, "add");
    assert.equal(toolSpan.run_type, "tool");
    assert.equal(toolSpan.parent_run_id, only(spans, "tool").id);
    // LangChain hands a tool's input to callbacks as its JSON text.
    assert.deepEqual(JSON.parse(String(toolSpan.inputs?.input)), { a: 2, b: 3 });
    assert.match(JSON.stringify(toolSpan.outputs), /5/);

    const shout = only(spans, "shout");
    assert.equal(shout.parent_run_id, only(spans, "traced").id, "a traceable nests under the node it runs in");
    assert.deepEqual(shout.outputs, { outputs: "HI" });

    const failedRoot = await tree(reader, failed.run_id);
    assert.equal(failedRoot.status, "error");
    assert.match(failedRoot.error ?? "", /boom on request/);
    const failedNode = only(flatten(failedRoot), "traced");
    assert.equal(failedNode.status, "error");
    assert.match(failedNode.error ?? "", /boom on request/);
  });
});
