// The run queue: claiming runs, leases, requeueing. Several processes may
// share the database, so each operation is one statement whose row locks make
// it atomic, and none of them ever waits for a lock (SKIP LOCKED), so they
// cannot deadlock with the transactions in runs.ts.
import type { QueuedRun } from "../types.js";
import { nowIso } from "../sqlite/rows.js";
import { isUniqueViolation, type Queryable } from "./database.js";
import { RUN_COLUMNS, fromRow, type RunRow } from "./run-rows.js";

/** How many times a claim runs again after losing the race for a thread to another claim. */
const CLAIM_ATTEMPTS = 5;

/**
 * The oldest startable run: pending, available, the first pending run of its
 * thread (FIFO per thread, available or not, as SQLite), on a thread with no
 * running run. Locks the run and its thread, skipping rows another
 * transaction holds: a run being claimed elsewhere, or a thread whose runs are
 * being created or ended right now (that transaction wakes the worker when
 * it commits, so nothing is left behind). Holding the thread lock also keeps
 * two claims from starting two runs of one thread.
 */
const CLAIM = `
  WITH next AS MATERIALIZED (
    SELECT r.run_id, r.thread_id FROM runs r JOIN threads t ON t.thread_id = r.thread_id
     WHERE r.status = 'pending' AND r.available_at <= $1
       AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running')
       AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND o.seq < r.seq)
     ORDER BY r.available_at, r.seq
     LIMIT 1
     FOR UPDATE OF r, t SKIP LOCKED
  ), claimed AS (
    UPDATE runs SET status = 'running', attempt = attempt + 1, lease_owner = $2, lease_expires_at = $3, updated_at = $4
      FROM next WHERE runs.run_id = next.run_id AND runs.status = 'pending'
    RETURNING ${RUN_COLUMNS.split(", ").map((column) => `runs.${column}`).join(", ")}
  ), busy AS (
    UPDATE threads SET status = 'busy', updated_at = $4 FROM claimed WHERE threads.thread_id = claimed.thread_id
  )
  SELECT * FROM claimed`;

export async function claimRun(q: Queryable, owner: string, leaseMs: number): Promise<QueuedRun | undefined> {
  for (let attempt = 1; ; attempt++) {
    const now = Date.now();
    try {
      const { rows } = await q.query<RunRow>(CLAIM, [now, owner, now + leaseMs, new Date(now).toISOString()]);
      return rows[0] && fromRow(rows[0]);
    } catch (err) {
      // Another claim made a run of this thread running between our snapshot
      // and our update; the index refused the second. Look again.
      if (attempt >= CLAIM_ATTEMPTS || !isUniqueViolation(err, "runs_one_running_per_thread")) throw err;
    }
  }
}

/** Extends the leases of every run `owner` holds. */
export async function heartbeat(q: Queryable, owner: string, leaseMs: number): Promise<void> {
  await q.query("UPDATE runs SET lease_expires_at = $1 WHERE lease_owner = $2 AND status = 'running'", [
    Date.now() + leaseMs,
    owner,
  ]);
}

/**
 * Puts running runs whose lease lapsed (or all, for a restart) back to
 * pending. Runs locked right now are being ended or renewed: skipped.
 */
export async function requeueExpired(q: Queryable, options: { all: boolean }): Promise<number> {
  const params: unknown[] = [nowIso()];
  const lapsed = options.all ? "" : `AND lease_expires_at < $${params.push(Date.now())}`;
  const result = await q.query(
    `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = $1
      WHERE run_id IN (SELECT run_id FROM runs WHERE status = 'running' ${lapsed} FOR UPDATE SKIP LOCKED)`,
    params,
  );
  return result.rowCount ?? 0;
}

/** Epoch ms of the earliest pending run that is not yet available, if any. */
export async function nextAvailableAt(q: Queryable): Promise<number | undefined> {
  const { rows } = await q.query<{ at: number | null }>(
    "SELECT min(available_at) AS at FROM runs WHERE status = 'pending' AND available_at > $1",
    [Date.now()],
  );
  return rows[0].at ?? undefined;
}
