// The run queue: claiming runs, leases, requeueing. Several processes may
// share the database, so each operation is one statement whose row locks make
// it atomic. Claim and requeue skip locked rows instead of waiting for them,
// and heartbeat and release only ever wait for run rows, so none of them can
// deadlock with the transactions of runs.ts (which lock a thread, then its run).
import type { QueuedRun } from "../types.js";
import { nowIso } from "../sqlite/rows.js";
import { isUniqueViolation, type Queryable } from "./database.js";
import { RUN_COLUMNS, fromRow, type RunRow } from "./run-rows.js";

/** How many times a claim looks again when a startable run was there but locked, or taken under it. */
const CLAIM_ATTEMPTS = 20;

/**
 * A pending, available run that is the first pending run of its thread (FIFO
 * per thread: an earlier run that is not yet available blocks it, as in
 * SQLite), on a thread with no running run.
 */
const STARTABLE = `r.status = 'pending' AND r.available_at <= $1
  AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running')
  AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND o.seq < r.seq)`;

/**
 * Claims the oldest startable run in one statement. It locks the run and its
 * thread, skipping rows another transaction holds (a run being claimed
 * elsewhere; a thread whose runs are being created or ended): it never waits,
 * so it cannot deadlock with runs.ts's transactions, which lock thread then
 * run. Holding the thread also keeps two claims from starting two runs of one
 * thread. The one row it returns also says whether a startable run existed
 * at all, so a claim that only met locked rows knows to look again.
 */
const CLAIM = `
  WITH next AS MATERIALIZED (
    SELECT r.run_id FROM runs r JOIN threads t ON t.thread_id = r.thread_id
     WHERE ${STARTABLE}
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
  SELECT claimed.*, EXISTS (SELECT 1 FROM runs r WHERE ${STARTABLE}) AS startable
    FROM (VALUES (1)) AS one LEFT JOIN claimed ON true`;

export async function claimRun(q: Queryable, owner: string, leaseMs: number): Promise<QueuedRun | undefined> {
  for (let attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
    const now = Date.now();
    try {
      const { rows } = await q.query<RunRow & { startable: boolean }>(CLAIM, [
        now,
        owner,
        now + leaseMs,
        new Date(now).toISOString(),
      ]);
      const { startable, ...row } = rows[0];
      if (row.run_id !== null) return fromRow(row);
      if (!startable) return undefined;
      // Only locked rows: their transactions are short (and SQLite would have
      // waited for them), so look again instead of leaving the run behind.
    } catch (err) {
      // Another claim made a run of this thread running between our snapshot
      // and our update, and the unique index refused the second: look again.
      if (!isUniqueViolation(err, "runs_one_running_per_thread")) throw err;
    }
    if (attempt < CLAIM_ATTEMPTS) await sleep(attempt * 2);
  }
  return undefined; // still contended after ~0.4 s: the worker's next wake-up (a run created or ended) claims it
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Extends the leases of every run `owner` holds. */
export async function heartbeat(q: Queryable, owner: string, leaseMs: number): Promise<void> {
  await q.query("UPDATE runs SET lease_expires_at = $1 WHERE lease_owner = $2 AND status = 'running'", [
    Date.now() + leaseMs,
    owner,
  ]);
}

/** Puts the running runs `owner` holds back to pending (a worker shutting down hands them on). */
export async function release(q: Queryable, owner: string): Promise<number> {
  const result = await q.query(
    `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = $1
      WHERE status = 'running' AND lease_owner = $2`,
    [nowIso(), owner],
  );
  return result.rowCount ?? 0;
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
