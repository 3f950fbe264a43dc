import { type RunColumns, queuedRun } from "../run-record.js";
import type { QueuedRun } from "../types.js";

/** The runs columns a QueuedRun is made of (pg parses the JSONB, bigint and timestamp ones). */
export const RUN_COLUMNS =
  "run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at, available_at, attempt, handovers, cancel_action, output";

export type RunRow = RunColumns;

export const fromRow = (row: RunRow): QueuedRun => queuedRun(row);
