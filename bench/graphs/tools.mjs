import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

/**
 * A fake chat model (no network): asks for the `add` tool when the last message is the user's, answers with the tool's
 * result once it is there. It goes through LangChain's chat model machinery (callbacks, run ids), as a real model does.
 */
class FakeToolCallingModel extends BaseChatModel {
  _llmType() {
    return "fake-tool-calling";
  }

  async _generate(messages) {
    const last = messages.at(-1);
    const message =
      last?._getType() === "tool"
        ? new AIMessage(`the sum is ${last.content}`)
        : new AIMessage({ content: "", tool_calls: [{ id: `call_${messages.length}`, name: "add", args: { a: 2, b: 3 } }] });
    return { generations: [{ message, text: String(message.content) }] };
  }
}

const add = tool(({ a, b }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

const model = new FakeToolCallingModel({});

/** A tool-calling loop: model → tools → model → end (two model calls, one tool call per run). */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode("tools", new ToolNode([add]))
  .addEdge("__start__", "model")
  .addConditionalEdges("model", toolsCondition)
  .addEdge("tools", "model")
  .compile();
