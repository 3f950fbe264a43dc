import { type RunColumns, queuedRun } from "../run-record.js";
import type { QueuedRun } from "../types.js";

/** A runs row as pg returns it: the JSONB, bigint and timestamp columns already parsed. */
export type RunRow = RunColumns;

export const fromRow = (row: RunRow): QueuedRun => queuedRun(row);
