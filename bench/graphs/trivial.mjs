import { Annotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ text: Annotation() });

/** One node, no model: the server's own overhead per run. */
export const graph = new StateGraph(State)
  .addNode("echo", (state) => ({ text: `echo: ${state.text}` }))
  .addEdge("__start__", "echo")
  .compile();
