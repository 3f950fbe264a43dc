import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, MessagesAnnotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  topic: Annotation<"billing" | "support">,
});

function classify(state: typeof State.State): { topic: "billing" | "support" } {
  const last = state.messages.at(-1);
  const text = last instanceof HumanMessage && typeof last.content === "string" ? last.content : "";
  return { topic: /invoice|bill|pay/i.test(text) ? "billing" : "support" };
}

const answer =
  (team: string) =>
  (): { messages: BaseMessage[] } => ({ messages: [new AIMessage(`Routed to ${team}.`)] });

export const graph = new StateGraph(State)
  .addNode("classify", classify)
  .addNode("billing", answer("billing"))
  .addNode("support", answer("support"))
  .addEdge("__start__", "classify")
  .addConditionalEdges("classify", (state) => state.topic, ["billing", "support"])
  .addEdge("billing", "__end__")
  .addEdge("support", "__end__")
  .compile();
