// The run queue on SQLite: claiming runs, leases, requeueing. Every write is
// one statement or one IMMEDIATE transaction, so processes sharing the file
// (BERTH_SQLITE_SHARED) take turns.
import { RUN_COLUMNS } from "../shared/columns.js";
import { nowIso } from "../shared/timestamps.js";
import type { HeldRun, QueuedRun, RunClaimant } from "../types.js";
import type { SqliteDatabase } from "./database.js";
import { fromRow, type RunRow } from "./run-rows.js";

export class SqliteRunQueue {
  private readonly statements;

  constructor(private readonly db: SqliteDatabase) {
    this.statements = {
      claimable: db.prepare(
        `SELECT r.run_id FROM runs r
          WHERE r.status = 'pending' AND r.available_at <= ?
            AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running')
            AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND o.rowid < r.rowid)
          ORDER BY r.available_at, r.rowid LIMIT 1`,
      ),
      markRunning: db.prepare(
        `UPDATE runs SET status = 'running', attempt = attempt + 1, lease_owner = ?, lease_expires_at = ?, updated_at = ?
          WHERE run_id = ? AND status = 'pending' RETURNING ${RUN_COLUMNS}`,
      ),
      threadBusy: db.prepare("UPDATE threads SET status = 'busy', updated_at = ? WHERE thread_id = ?"),
      anyPending: db.prepare("SELECT 1 FROM runs WHERE status = 'pending' LIMIT 1"),
    };
  }

  claim(owner: string, leaseMs: number, claimedNone?: (pendingLeft: boolean) => void): QueuedRun | undefined {
    // Most claims find nothing: a read, which takes no lock, answers those.
    if (!this.statements.claimable.get(Date.now())) {
      claimedNone?.(this.statements.anyPending.get() !== undefined);
      return undefined;
    }
    return this.db
      .transaction(() => {
        const now = Date.now();
        const next = this.statements.claimable.get(now) as { run_id: string } | undefined;
        if (!next) {
          claimedNone?.(true); // taken under it by another process sharing the file: more may come
          return undefined;
        }
        const run = this.markRunning(next.run_id, { owner, leaseMs }, now);
        this.statements.threadBusy.run(new Date(now).toISOString(), run.thread_id);
        return run;
      })
      .immediate();
  }

  /**
   * Within the transaction that inserted `runId` (its thread already marked
   * busy): claims it for `claimant` when it is the run a claim would take now,
   * so no older claimable run is overtaken.
   */
  claimInserted(runId: string, claimant: RunClaimant): QueuedRun | undefined {
    const now = Date.now();
    const next = this.statements.claimable.get(now) as { run_id: string } | undefined;
    return next?.run_id === runId ? this.markRunning(runId, claimant, now) : undefined;
  }

  private markRunning(runId: string, claimant: RunClaimant, now: number): QueuedRun {
    const iso = new Date(now).toISOString();
    return fromRow(this.statements.markRunning.get(claimant.owner, now + claimant.leaseMs, iso, runId) as RunRow);
  }

  /** Extends `owner`'s leases: those of `held` (all of the owner's without it); returns the `held` runs it no longer holds. */
  heartbeat(owner: string, leaseMs: number, held?: HeldRun[]): string[] {
    const only = held ? "AND (run_id, attempt) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))" : "";
    const params: unknown[] = [
      Date.now() + leaseMs,
      owner,
      ...(held ? [JSON.stringify(held.map((run) => [run.run_id, run.attempt]))] : []),
    ];
    const renewed = this.db
      .prepare(`UPDATE runs SET lease_expires_at = ? WHERE lease_owner = ? AND status = 'running' ${only} RETURNING run_id`)
      .all(...params) as { run_id: string }[];
    const kept = new Set(renewed.map((row) => row.run_id));
    return (held ?? []).map((run) => run.run_id).filter((runId) => !kept.has(runId));
  }

  /** Hands `owner`'s running runs (only `run`'s attempt, when given) back to the queue, without counting the attempt. */
  release(owner: string, run?: HeldRun): number {
    const only = run ? "AND run_id = ? AND attempt = ?" : "";
    return this.db
      .prepare(
        `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, handovers = handovers + 1, updated_at = ?
          WHERE status = 'running' AND lease_owner = ? ${only}`,
      )
      .run(nowIso(), owner, ...(run ? [run.run_id, run.attempt] : [])).changes;
  }

  /** Puts back to pending the running runs nobody executes (lease lapsed or no owner, owner dead, or all), but those in `except`. */
  requeueExpired(options: { all: boolean; deadOwners?: string[]; except?: string[] }): number {
    const orphaned = options.all
      ? "1"
      : `(lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at < ?
          OR lease_owner IN (SELECT value FROM json_each(?)))`;
    const params: unknown[] = [nowIso(), ...(options.all ? [] : [Date.now(), JSON.stringify(options.deadOwners ?? [])])];
    return this.db
      .prepare(
        `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
          WHERE status = 'running' AND ${orphaned} AND run_id NOT IN (SELECT value FROM json_each(?))`,
      )
      .run(...params, JSON.stringify(options.except ?? [])).changes;
  }

  leaseOwners(): string[] {
    const rows = this.db
      .prepare("SELECT DISTINCT lease_owner FROM runs WHERE status = 'running' AND lease_owner IS NOT NULL")
      .all() as { lease_owner: string }[];
    return rows.map((row) => row.lease_owner);
  }

  nextAvailableAt(): number | undefined {
    const row = this.db
      .prepare("SELECT min(available_at) AS at FROM runs WHERE status = 'pending' AND available_at > ?")
      .get(Date.now()) as { at: number | null };
    return row.at ?? undefined;
  }
}
