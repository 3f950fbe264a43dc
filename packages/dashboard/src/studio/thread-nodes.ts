import type { ThreadState } from "@langchain/langgraph-sdk";
import type { NodeRun } from "./run-state";

/**
 * What each node last wrote on the thread's current branch, from the newest checkpoint back through its parents:
 * a checkpoint's tasks are the steps run from it, each with its `result` once it ran. The graph of a thread opened
 * after its runs shows them as a live run would have; a node the thread is stopped in at an interrupt is marked so.
 */
export function nodesOfHistory(history: ThreadState[]): Record<string, NodeRun> {
  const byId = new Map(history.map((state) => [state.checkpoint.checkpoint_id, state]));
  const nodes: Record<string, NodeRun> = {};
  const seen = new Set<string | null | undefined>();
  let state: ThreadState | undefined = history[0];
  for (const task of state?.tasks ?? []) {
    if (task.interrupts.length > 0) nodes[task.name] = { status: "interrupted" };
  }
  while (state && !seen.has(state.checkpoint.checkpoint_id)) {
    seen.add(state.checkpoint.checkpoint_id);
    for (const task of state.tasks) {
      if (task.name === "__start__" || task.name in nodes || task.result == null) continue;
      nodes[task.name] = { status: task.error ? "error" : "done", update: task.result, error: task.error ?? undefined };
    }
    const parent: string | null | undefined = state.parent_checkpoint?.checkpoint_id;
    state = parent ? byId.get(parent) : undefined;
  }
  return nodes;
}
