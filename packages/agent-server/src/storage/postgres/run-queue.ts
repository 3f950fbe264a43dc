// The run queue: claiming runs, leases, requeueing. Several processes may
// share the database, so each operation is one statement whose row locks make
// it atomic. Claim and requeue skip locked rows instead of waiting for them,
// and heartbeat and release only ever wait for run rows, so none of them can
// deadlock with the transactions of runs.ts (which lock a thread, then its run).
import { RUN_COLUMNS, qualified } from "../shared/columns.js";
import { nowIso } from "../shared/timestamps.js";
import type { HeldRun, QueuedRun } from "../types.js";
import { isUniqueViolation, type Queryable } from "./database.js";
import { prepared } from "./prepared.js";
import { fromRow, type RunRow } from "./run-rows.js";

/** How many times a claim looks again when a startable run was there but locked, or taken under it. */
const CLAIM_ATTEMPTS = 20;

/**
 * A pending, available run that is the first pending run of its thread (FIFO
 * per thread: an earlier run that is not yet available blocks it, as in
 * SQLite), on a thread with no running run. `OFFSET 0` keeps each check a
 * lookup of that thread's runs (runs_thread) per candidate: as a join, a
 * table whose statistics are young (every new database) got plans that read
 * every pending or running run once per candidate.
 */
const STARTABLE = `r.status = 'pending' AND r.available_at <= $1
  AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running' OFFSET 0)
  AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND o.seq < r.seq OFFSET 0)`;

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
     WHERE runs.run_id = (SELECT run_id FROM next) AND runs.status = 'pending'
    RETURNING ${qualified("runs", RUN_COLUMNS)}
  ), busy AS (
    UPDATE threads SET status = 'busy', updated_at = $4 WHERE threads.thread_id = (SELECT thread_id FROM claimed)
  )
  SELECT ${qualified("claimed", RUN_COLUMNS)}, EXISTS (SELECT 1 FROM runs r WHERE ${STARTABLE}) AS startable,
         EXISTS (SELECT 1 FROM runs WHERE status = 'pending') AS pending
    FROM (VALUES (1)) AS one LEFT JOIN claimed ON true`;

export async function claimRun(
  q: Queryable,
  owner: string,
  leaseMs: number,
  claimedNone?: (pendingLeft: boolean) => void,
): Promise<QueuedRun | undefined> {
  for (let attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
    const now = Date.now();
    try {
      const { rows } = await prepared<RunRow & { startable: boolean; pending: boolean }>(q, "berth_claim_run_pending", CLAIM, [
        now,
        owner,
        now + leaseMs,
        new Date(now).toISOString(),
      ]);
      const { startable, pending, ...row } = rows[0];
      if (row.run_id !== null) return fromRow(row);
      if (!startable) {
        claimedNone?.(pending);
        return undefined;
      }
      // Only locked rows: their transactions are short (and SQLite would have
      // waited for them), so look again instead of leaving the run behind.
    } catch (err) {
      // Another claim made a run of this thread running between our snapshot
      // and our update, and the unique index refused the second: look again.
      if (!isUniqueViolation(err, "runs_one_running_per_thread")) throw err;
    }
    if (attempt < CLAIM_ATTEMPTS) await sleep(attempt * 2);
  }
  claimedNone?.(true);
  return undefined; // still contended after ~0.4 s: the worker's next wake-up (a run created or ended) claims it
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Extends `owner`'s leases: those of `held` (all of the owner's without it); returns the `held` runs it no longer holds. */
export async function heartbeat(q: Queryable, owner: string, leaseMs: number, held?: HeldRun[]): Promise<string[]> {
  const params: unknown[] = [Date.now() + leaseMs, owner];
  const only = held ? `AND (run_id, attempt) IN (${heldRuns(params, held)})` : "";
  const { rows } = await q.query<{ run_id: string }>(
    `UPDATE runs SET lease_expires_at = $1 WHERE lease_owner = $2 AND status = 'running' ${only} RETURNING run_id`,
    params,
  );
  const renewed = new Set(rows.map((row) => row.run_id));
  return (held ?? []).map((run) => run.run_id).filter((runId) => !renewed.has(runId));
}

/** The (run_id, attempt) rows of `held`, its arrays pushed onto `params`. */
function heldRuns(params: unknown[], held: HeldRun[]): string {
  const runIds = `$${params.push(held.map((run) => run.run_id))}::text[]`;
  const attempts = `$${params.push(held.map((run) => run.attempt))}::int[]`;
  return `SELECT h.run_id, h.attempt FROM unnest(${runIds}, ${attempts}) AS h(run_id, attempt)`;
}

/**
 * Hands the running runs `owner` holds (only `run`'s attempt, when given)
 * back to the queue at a graceful shutdown, without counting the attempt.
 */
export async function release(q: Queryable, owner: string, run?: HeldRun): Promise<number> {
  const params: unknown[] = [nowIso(), owner];
  const only = run ? `AND run_id = $${params.push(run.run_id)} AND attempt = $${params.push(run.attempt)}` : "";
  const result = await q.query(
    `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, handovers = handovers + 1, updated_at = $1
      WHERE status = 'running' AND lease_owner = $2 ${only}`,
    params,
  );
  return result.rowCount ?? 0;
}

/**
 * Puts back to pending the running runs nobody executes: lease lapsed or no
 * owner, owner dead, or all of them (a restart), but those in `except`. Runs
 * locked right now are being ended or renewed: skipped.
 */
export async function requeueExpired(
  q: Queryable,
  options: { all: boolean; deadOwners?: string[]; except?: string[] },
): Promise<number> {
  const params: unknown[] = [nowIso()];
  const orphaned = options.all
    ? "true"
    : `(lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at < $${params.push(Date.now())}
        OR lease_owner = ANY($${params.push(options.deadOwners ?? [])}::text[]))`;
  const kept = `AND NOT run_id = ANY($${params.push(options.except ?? [])}::text[])`;
  const result = await q.query(
    `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = $1
      WHERE run_id IN (SELECT run_id FROM runs WHERE status = 'running' AND ${orphaned} ${kept} FOR UPDATE SKIP LOCKED)`,
    params,
  );
  return result.rowCount ?? 0;
}

/** The owners of the running runs' leases. */
export async function leaseOwners(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ lease_owner: string }>(
    "SELECT DISTINCT lease_owner FROM runs WHERE status = 'running' AND lease_owner IS NOT NULL",
  );
  return rows.map((row) => row.lease_owner);
}

/** Epoch ms of the earliest pending run that is not yet available, if any. */
export async function nextAvailableAt(q: Queryable): Promise<number | undefined> {
  const { rows } = await q.query<{ at: number | null }>(
    "SELECT min(available_at) AS at FROM runs WHERE status = 'pending' AND available_at > $1",
    [Date.now()],
  );
  return rows[0].at ?? undefined;
}
