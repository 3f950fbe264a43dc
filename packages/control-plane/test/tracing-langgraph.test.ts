import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { type ControlPlane, startControlPlane } from "@berth/test-support";
import { flatten, listRuns, runTree, threadUsage, tracingClient } from "./helpers/tracing.js";

/** A chat model that answers at once and reports its token usage as real providers do (usage_metadata). */
class CountingChatModel extends BaseChatModel {
  _llmType(): string {
    return "counting";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = new AIMessage({
      content: `seen ${messages.length}`,
      usage_metadata: { input_tokens: 10 * messages.length, output_tokens: 5, total_tokens: 10 * messages.length + 5 },
    });
    return { generations: [{ text: String(message.content), message }] };
  }
}

function agentGraph() {
  const model = new CountingChatModel({});
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", async () => ({ messages: [] }))
    .addEdge(START, "agent")
    .addEdge("agent", "tools")
    .addEdge("tools", END)
    .compile();
}

describe("tracing: a LangGraph graph traced by LangChainTracer", () => {
  let cp: ControlPlane;

  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  for (const autoBatchTracing of [true, false]) {
    test(`every run of the tree carries thread_id (autoBatchTracing ${autoBatchTracing ? "on" : "off"}); tokens add up per thread`, async () => {
      const client = tracingClient(cp.url, cp.adminKey, { autoBatchTracing });
      const projectName = `graph-${randomUUID().slice(0, 8)}`;
      const threadId = randomUUID();
      const graph = agentGraph();
      const tracer = new LangChainTracer({ client, projectName });
      let messages: BaseMessage[] = [new HumanMessage("hi")];
      for (let turn = 0; turn < 2; turn++) {
        const state = await graph.invoke({ messages }, { callbacks: [tracer], metadata: { thread_id: threadId } });
        messages = [...state.messages, new HumanMessage("again")];
      }
      await awaitAllCallbacks();
      await client.awaitPendingTraceBatches();

      const roots = await listRuns(cp.admin, projectName, `?thread_id=${threadId}&root_only=true&order=asc`);
      assert.equal(roots.length, 2, "one trace per invocation");
      for (const root of roots) {
        const runs = flatten(await runTree(cp.admin, root.id));
        assert.ok(runs.length >= 4, `graph, nodes and the model: ${runs.map((run) => run.name).join(", ")}`);
        for (const run of runs) {
          assert.equal(run.extra.metadata?.thread_id, threadId, `${run.run_type} ${run.name} has thread_id in its metadata`);
          assert.equal(run.thread_id, threadId);
          assert.equal(run.status, "success", `${run.name} ended`);
        }
        const names = runs.map((run) => run.name);
        assert.ok(names.includes("agent") && names.includes("tools"), names.join(", "));
        const llm = runs.filter((run) => run.run_type === "llm");
        assert.equal(llm.length, 1);
      }
      // Every run of the thread, not only the roots, is found by the filter.
      const all = await listRuns(cp.admin, projectName, `?thread_id=${threadId}`);
      assert.ok(all.length >= 8);

      // Turn 1 sends 1 message (10 + 5 tokens), turn 2 sends 3 (30 + 5).
      const usage = await threadUsage(cp.admin, projectName, threadId);
      assert.deepEqual(
        [usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.runs, usage.traces],
        [40, 10, 50, 2, 2],
      );
    });
  }
});
