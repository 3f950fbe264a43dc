import { Annotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ text: Annotation() });

/** A project needs a graph; the store benchmark only calls the /store routes. */
export const graph = new StateGraph(State)
  .addNode("echo", (state) => ({ text: `echo: ${state.text}` }))
  .addEdge("__start__", "echo")
  .compile();
