import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

const add = tool(({ a, b }: { a: number; b: number }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

/** A fake model: asks for the tool once, then answers with its result. */
function model(state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } {
  const last = state.messages.at(-1);
  if (last instanceof ToolMessage) return { messages: [new AIMessage(`The sum is ${String(last.content)}.`)] };
  return { messages: [new AIMessage({ content: "", tool_calls: [{ id: "call-1", name: "add", args: { a: 2, b: 3 } }] })] };
}

function route(state: typeof MessagesAnnotation.State): "tools" | "__end__" {
  const last = state.messages.at(-1);
  return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? "tools" : "__end__";
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("model", model)
  .addNode("tools", new ToolNode([add]))
  .addEdge("__start__", "model")
  .addConditionalEdges("model", route, ["tools", "__end__"])
  .addEdge("tools", "model")
  .compile();
