import { Annotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ text: Annotation(), ms: Annotation(), reply: Annotation() });

/** One node awaiting a simulated model call (a timer, 1 s unless the input's `ms` says): an I/O-bound run, no CPU while it waits. */
export const graph = new StateGraph(State)
  .addNode("model", async (state) => {
    await new Promise((resolve) => setTimeout(resolve, state.ms ?? 1000));
    return { reply: `model: ${state.text}` };
  })
  .addEdge("__start__", "model")
  .compile();
