import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

/** The shape of every chat agent, without a model: one node appending one `AIMessage` to `MessagesAnnotation`. */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("reply", (state) => ({ messages: [new AIMessage(`echo: ${state.messages.at(-1)?.content ?? ""}`)] }))
  .addEdge("__start__", "reply")
  .compile();
