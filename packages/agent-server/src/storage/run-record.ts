import type { CancelAction, JsonObject, QueuedRun, Run, RunKwargs } from "./types.js";

/** A row of the runs table with its JSON columns parsed (both backends store the same columns). */
export interface RunColumns {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: Run["status"];
  metadata: JsonObject | null;
  kwargs: RunKwargs;
  multitask_strategy: Run["multitask_strategy"];
  created_at: string;
  updated_at: string;
  available_at: number;
  attempt: number;
  handovers: number;
  cancel_action: CancelAction | null;
  output: unknown;
}

/** A stored run as the queue sees it, with the API's key order. */
export function queuedRun(row: RunColumns): QueuedRun {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    assistant_id: row.assistant_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    status: row.status,
    metadata: row.metadata ?? {},
    multitask_strategy: row.multitask_strategy,
    kwargs: row.kwargs,
    attempt: row.attempt,
    handovers: row.handovers,
    cancel_action: row.cancel_action ?? null,
    available_at: row.available_at,
    output: row.output ?? null,
  };
}

/** The API's view of a run: without the queue's bookkeeping. */
export function toApiRun(run: QueuedRun): Run {
  const {
    attempt: _attempt,
    handovers: _handovers,
    cancel_action: _cancelAction,
    available_at: _availableAt,
    output: _output,
    ...api
  } = run;
  return api;
}
