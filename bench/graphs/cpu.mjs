import { Annotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ work: Annotation(), digest: Annotation() });

/** Iterations of the loop below that take about 1 ms of one core on the bench machine. */
const PER_MS = 150_000;

/**
 * One node that burns CPU: a fixed amount of work (`work` ms-equivalents,
 * default 5), not a fixed time, so a busy machine makes it slower rather than
 * cheaper. With it the graph, not the database, bounds a worker's runs/s.
 */
export const graph = new StateGraph(State)
  .addNode("burn", (state) => {
    let x = 0x9e3779b9;
    for (let i = Math.round((state.work ?? 5) * PER_MS); i > 0; i--) x = Math.imul(x ^ (x >>> 15), 0x85ebca6b) + i;
    return { digest: x >>> 0 };
  })
  .addEdge("__start__", "burn")
  .compile();
