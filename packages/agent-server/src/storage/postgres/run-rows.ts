import { type RunColumns, queuedRun } from "../run-record.js";
import type { QueuedRun, RunLease } from "../types.js";

/** A runs row as pg returns it: the JSONB, bigint and timestamp columns already parsed. */
export type RunRow = RunColumns;

export const fromRow = (row: RunRow): QueuedRun => queuedRun(row);

/** The condition that `lease` still holds the run (none without a lease), its values pushed onto `params`. */
export function leaseHeld(params: unknown[], lease: RunLease | undefined): string {
  if (!lease) return "";
  return `AND status = 'running' AND lease_owner = $${params.push(lease.owner)} AND attempt = $${params.push(lease.attempt)}`;
}
