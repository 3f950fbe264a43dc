import type {
  CancelAction,
  CreateRunResult,
  HeldRun,
  NewRun,
  QueuedRun,
  Run,
  RunEnd,
  RunClaimant,
  RunLease,
  RunRepository,
  RunStatus,
  StoredEvent,
} from "../types.js";
import { toApiRun } from "../run-record.js";
import { RUN_COLUMNS } from "../shared/columns.js";
import { nowIso } from "../shared/timestamps.js";
import type { SqliteDatabase } from "./database.js";
import { eventsTopic, SqliteRunEvents } from "./run-events.js";
import { insertRun } from "./run-insert.js";
import { SqliteRunQueue } from "./run-queue.js";
import { fromRow, LEASE_HELD, leaseParams, type RunRow } from "./run-rows.js";
import { insertWebhook } from "./webhook-outbox.js";
import { groupCommitOf } from "./group-commit.js";

/**
 * Runs over SQLite: every write transaction is IMMEDIATE, so processes
 * sharing the file take turns. The queue operations are in run-queue.ts, the
 * event log in run-events.ts.
 */
export class SqliteRunRepository implements RunRepository {
  private readonly statements;
  private readonly queue: SqliteRunQueue;
  private readonly events: SqliteRunEvents;

  constructor(private readonly db: SqliteDatabase) {
    this.queue = new SqliteRunQueue(db);
    this.events = new SqliteRunEvents(db);
    this.statements = {
      get: db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`),
      inflight: db.prepare(
        `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = ? AND status IN ('pending', 'running') ORDER BY rowid`,
      ),
    };
  }

  async create(run: NewRun, claimFor?: RunClaimant): Promise<CreateRunResult> {
    // Runs created at once commit together; each is a savepoint, so a refused one (thread busy) is rolled back alone.
    return groupCommitOf(this.db).run((): CreateRunResult => {
      const { result, existingThread } = insertRun(this.db, run);
      if (result.kind !== "created" || !claimFor) return result;
      const claimed = this.queue.claimInserted(run.run_id, claimFor);
      if (!claimed) return result;
      // A thread the insert made has no checkpoint; the saver answers for one that existed.
      return { ...result, claimed, ...(existingThread ? { thread: existingThread } : { threadCheckpointed: false }) };
    });
  }

  async get(runId: string): Promise<QueuedRun | undefined> {
    const row = this.statements.get.get(runId) as RunRow | undefined;
    return row && fromRow(row);
  }

  async list(threadId: string, query: { limit: number; offset: number; status?: RunStatus }): Promise<Run[]> {
    const rows = this.db
      .prepare(
        `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = ? ${query.status ? "AND status = ?" : ""}
          ORDER BY rowid DESC LIMIT ? OFFSET ?`,
      )
      .all(...[threadId, ...(query.status ? [query.status] : []), query.limit, query.offset]) as RunRow[];
    return rows.map((row) => toApiRun(fromRow(row)));
  }

  async inflight(threadId: string): Promise<Run[]> {
    return this.statements.inflight.all(threadId).map((row) => toApiRun(fromRow(row as RunRow)));
  }

  async findActive(filter: { thread_id?: string; run_ids?: string[]; status?: "pending" | "running" | "all" }) {
    const clauses = [
      filter.status === "pending" || filter.status === "running"
        ? `status = '${filter.status}'`
        : "status IN ('pending', 'running')",
    ];
    const params: unknown[] = [];
    if (filter.thread_id) {
      clauses.push("thread_id = ?");
      params.push(filter.thread_id);
    }
    if (filter.run_ids) {
      clauses.push("run_id IN (SELECT value FROM json_each(?))");
      params.push(JSON.stringify(filter.run_ids));
    }
    const rows = this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE ${clauses.join(" AND ")} ORDER BY rowid`).all(...params);
    return rows.map((row) => toApiRun(fromRow(row as RunRow)));
  }

  async delete(runId: string): Promise<boolean> {
    return this.db.prepare("DELETE FROM runs WHERE run_id = ?").run(runId).changes > 0;
  }

  async claim(owner: string, leaseMs: number, claimedNone?: (pendingLeft: boolean) => void): Promise<QueuedRun | undefined> {
    return this.queue.claim(owner, leaseMs, claimedNone);
  }

  async heartbeat(owner: string, leaseMs: number, held?: HeldRun[]): Promise<string[]> {
    return this.queue.heartbeat(owner, leaseMs, held);
  }

  async release(owner: string, run?: HeldRun): Promise<number> {
    return this.queue.release(owner, run);
  }

  async requeueExpired(options: { all: boolean; deadOwners?: string[]; except?: string[] }): Promise<number> {
    return this.queue.requeueExpired(options);
  }

  async leaseOwners(): Promise<string[]> {
    return this.queue.leaseOwners();
  }

  async nextAvailableAt(): Promise<number | undefined> {
    return this.queue.nextAvailableAt();
  }

  async finish(runId: string, end: RunEnd, lease?: RunLease): Promise<boolean> {
    return groupCommitOf(this.db).run(
      () => {
        const now = nowIso();
        const updated = this.db
          .prepare(
            `UPDATE runs SET status = ?, output = ?, ended_at = ?, updated_at = ?, lease_owner = NULL, lease_expires_at = NULL,
                 kwargs = CASE WHEN ? IS NULL THEN kwargs ELSE json_set(kwargs, '$.feedback_urls', json(?)) END
            WHERE run_id = ? ${lease ? LEASE_HELD : ""} RETURNING thread_id`,
          )
          .get(
            end.status,
            JSON.stringify(end.output ?? null),
            now,
            now,
            ...feedbackUrlsParams(end),
            runId,
            ...leaseParams(lease),
          ) as { thread_id: string } | undefined;
        if (!updated) return false;
        if (end.webhook) insertWebhook(this.db, runId, updated.thread_id, end.webhook, now);
        if (end.deleteThread) this.db.prepare("DELETE FROM threads WHERE thread_id = ?").run(updated.thread_id);
        else {
          if (end.events) this.events.insertInTransaction(runId, end.events);
          this.recordThreadState(updated.thread_id, end.thread, now);
        }
        return true;
      },
      end.events?.length ? eventsTopic(runId) : undefined,
    );
  }

  async discard(runId: string, thread: RunEnd["thread"], lease?: RunLease): Promise<boolean> {
    return this.db
      .transaction(() => {
        const deleted = this.db
          .prepare(`DELETE FROM runs WHERE run_id = ? ${lease ? LEASE_HELD : ""} RETURNING thread_id`)
          .get(runId, ...leaseParams(lease)) as { thread_id: string } | undefined;
        if (deleted) this.recordThreadState(deleted.thread_id, thread, nowIso());
        return deleted !== undefined;
      })
      .immediate();
  }

  async requestCancel(runId: string, action: CancelAction): Promise<boolean> {
    return (
      this.db.prepare("UPDATE runs SET cancel_action = ? WHERE run_id = ? AND status = 'running'").run(action, runId).changes > 0
    );
  }

  async cancelPending(runId: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        const now = nowIso();
        const updated = this.db
          .prepare(
            `UPDATE runs SET status = 'interrupted', ended_at = ?, updated_at = ? WHERE run_id = ? AND status = 'pending'
            RETURNING thread_id`,
          )
          .get(now, now, runId) as { thread_id: string } | undefined;
        if (!updated) return false;
        const thread = this.db.prepare(`SELECT status FROM threads WHERE thread_id = ?`).get(updated.thread_id) as
          | { status: string }
          | undefined;
        if (thread?.status === "busy") this.settleThreadStatus(updated.thread_id, "idle", now);
        return true;
      })
      .immediate();
  }

  async appendEvents(runId: string, batch: StoredEvent[], lease?: RunLease, threadId?: string): Promise<boolean> {
    return this.events.appendEvents(runId, batch, lease, threadId);
  }

  async readThreadEvents(threadId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return this.events.readThreadEvents(threadId, afterSeq, limit);
  }

  async threadEventSeq(threadId: string): Promise<number> {
    return this.events.threadEventSeq(threadId);
  }

  async readEvents(runId: string, afterSeq: number): Promise<StoredEvent[]> {
    return this.events.readEvents(runId, afterSeq);
  }

  async lastEventSeq(runId: string): Promise<number> {
    return this.events.lastEventSeq(runId);
  }

  async pruneEvents(endedBefore: string): Promise<number> {
    return this.events.pruneEvents(endedBefore);
  }

  /** Thread status after a run: error > interrupted > busy (more runs waiting) > idle. */
  private recordThreadState(threadId: string, state: RunEnd["thread"], now: string): void {
    this.db
      .prepare(`UPDATE threads SET "values" = ?, interrupts = ?, updated_at = ? WHERE thread_id = ?`)
      .run(state.values === null ? null : JSON.stringify(state.values), JSON.stringify(state.interrupts), now, threadId);
    this.settleThreadStatus(threadId, state.status ?? "idle", now);
  }

  private settleThreadStatus(threadId: string, status: string, now: string): void {
    const waiting = this.db
      .prepare("SELECT 1 FROM runs WHERE thread_id = ? AND status IN ('pending', 'running') LIMIT 1")
      .get(threadId);
    const settled = status === "idle" && waiting ? "busy" : status;
    this.db.prepare("UPDATE threads SET status = ?, updated_at = ? WHERE thread_id = ?").run(settled, now, threadId);
  }
}

/** The two parameters of `kwargs = CASE WHEN ? IS NULL ... json(?)`: the feedback URLs as JSON, or NULL to leave kwargs alone. */
function feedbackUrlsParams(end: RunEnd): [string | null, string | null] {
  const json = end.feedbackUrls ? JSON.stringify(end.feedbackUrls) : null;
  return [json, json];
}
