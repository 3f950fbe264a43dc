import { AIMessage, type BaseMessage, RemoveMessage } from "@langchain/core/messages";
import { Annotation, MessagesAnnotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  summary: Annotation<string>({ reducer: (_, next) => next, default: () => "" }),
});

/** Keeps the last two messages and folds the rest into a summary. */
function summarize(state: typeof State.State): { summary: string; messages: BaseMessage[] } {
  const older = state.messages.slice(0, -2);
  const words = older.map((message) => String(message.content)).join(" ");
  return {
    summary: `${state.summary} ${words}`.trim(),
    messages: older.map((message) => new RemoveMessage({ id: message.id ?? "" })),
  };
}

function reply(state: typeof State.State): { messages: BaseMessage[] } {
  return { messages: [new AIMessage(`Summary so far: ${state.summary || "(none)"}`)] };
}

export const graph = new StateGraph(State)
  .addNode("summarize", summarize)
  .addNode("reply", reply)
  .addEdge("__start__", "summarize")
  .addEdge("summarize", "reply")
  .addEdge("reply", "__end__")
  .compile();
