import { Annotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ ms: Annotation(), held: Annotation() });

/** Waits `ms` milliseconds: keeps a stream open without using the CPU. */
export const graph = new StateGraph(State)
  .addNode("hold", async (state) => {
    await new Promise((resolve) => setTimeout(resolve, state.ms ?? 100));
    return { held: true };
  })
  .addEdge("__start__", "hold")
  .compile();
