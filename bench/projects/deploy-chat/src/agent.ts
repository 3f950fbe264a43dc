import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

/** Counts the words of the conversation: a graph with real imports and no model provider. */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("count", (state) => {
    const words = state.messages.map((message) => String(message.content)).join(" ").split(/\s+/).filter(Boolean);
    return { messages: [new AIMessage(`${words.length} words so far`)] };
  })
  .addEdge("__start__", "count")
  .addEdge("count", "__end__")
  .compile();
