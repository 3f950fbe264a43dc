import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

/** Answers with the last user message, so the example runs with no model provider. */
function respond(state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } {
  const last = state.messages.at(-1);
  const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
  return { messages: [new AIMessage(`${process.env.ECHO_PREFIX ?? ""}${text}`)] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", respond)
  .addEdge("__start__", "respond")
  .addEdge("respond", "__end__")
  .compile();
