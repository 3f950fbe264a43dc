import type { JsonObject, QueuedRun, Run, RunKwargs } from "../types.js";

/** The runs columns a QueuedRun is made of (pg parses the JSONB, bigint and timestamp ones). */
export const RUN_COLUMNS =
  "run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at, available_at, attempt, output";

export interface RunRow {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: Run["status"];
  metadata: JsonObject;
  kwargs: RunKwargs;
  multitask_strategy: Run["multitask_strategy"];
  created_at: string;
  updated_at: string;
  available_at: number;
  attempt: number;
  output: unknown;
}

/** A row as the API's QueuedRun, in SQLite's key order. */
export function fromRow(row: RunRow): QueuedRun {
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
    available_at: row.available_at,
    output: row.output ?? null,
  };
}

export function toApiRun(run: QueuedRun): Run {
  const { attempt: _attempt, available_at: _availableAt, output: _output, ...api } = run;
  return api;
}

export const apiRunFromRow = (row: RunRow): Run => toApiRun(fromRow(row));
