import { type RunColumns, queuedRun } from "../run-record.js";
import type { QueuedRun, RunLease } from "../types.js";
import { parseJsonColumn } from "./json-columns.js";

/** A runs row as SQLite returns it: JSON columns as text. */
export interface RunRow extends Omit<RunColumns, "metadata" | "kwargs" | "output"> {
  metadata: string;
  kwargs: string;
  output: string | null;
}

export function fromRow(row: RunRow): QueuedRun {
  return queuedRun({
    ...row,
    metadata: parseJsonColumn(row.metadata),
    kwargs: JSON.parse(row.kwargs),
    output: parseJsonColumn<unknown>(row.output),
  });
}

/** The condition that a claim still holds the run; its parameters are `leaseParams`. */
export const LEASE_HELD = "AND status = 'running' AND lease_owner = ? AND attempt = ?";

export function leaseParams(lease: RunLease | undefined): unknown[] {
  return lease ? [lease.owner, lease.attempt] : [];
}
