import type { JsonObject, NewRun, Thread } from "../types.js";

/** The metadata of a thread a run's creation makes: what the run asked for, and the graph and assistant it runs. */
export function createdThreadMetadata(run: NewRun): JsonObject {
  return { ...run.thread_metadata, graph_id: run.graph_id, assistant_id: run.assistant_id };
}

/**
 * The thread a stateless run's creation made (its id fresh, so the creation made it, as it was written) at
 * `createdAt`: its executor needs no read of it.
 */
export function createdThread(run: NewRun, createdAt: string): Thread {
  return {
    thread_id: run.thread_id,
    created_at: createdAt,
    updated_at: createdAt,
    metadata: createdThreadMetadata(run),
    status: "busy",
    config: run.thread_config ?? {},
    values: null,
    interrupts: {},
  };
}
