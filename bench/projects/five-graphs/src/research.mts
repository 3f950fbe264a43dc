import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { Annotation, MessagesAnnotation, Send, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  findings: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
});

const topics = ["prices", "reviews", "availability"];

function search(state: { topic: string }): { findings: string[] } {
  return { findings: [`notes on ${state.topic}`] };
}

function report(state: typeof State.State): { messages: BaseMessage[] } {
  return { messages: [new AIMessage(state.findings.join("; "))] };
}

export const graph = new StateGraph(State)
  .addNode("search", search)
  .addNode("report", report)
  .addConditionalEdges("__start__", () => topics.map((topic) => new Send("search", { topic })))
  .addEdge("search", "report")
  .addEdge("report", "__end__")
  .compile();
