import type pg from "pg";
import type {
  CancelAction,
  CreateRunResult,
  HeldRun,
  NewRun,
  QueuedRun,
  Run,
  RunClaimant,
  RunEnd,
  RunLease,
  RunRepository,
  RunStatus,
  StoredEvent,
  ThreadStateSummary,
} from "../types.js";
import { toApiRun } from "../run-record.js";
import { RUN_COLUMNS } from "../shared/columns.js";
import { nowIso } from "../shared/timestamps.js";
import { sqlState, withTransaction, type Queryable } from "./database.js";
import { jsonb, jsonbOrNull } from "@berth/service-kit";
import { prepared } from "./prepared.js";
import * as events from "./run-events.js";
import { insertRun } from "./run-insert.js";
import * as queue from "./run-queue.js";
import { fromRow, leaseHeld, type RunRow } from "./run-rows.js";
import { insertWebhook } from "./webhook-outbox.js";

const FINISH_RUN =
  "SELECT berth_finish_run($1, $2, $3::jsonb, $4, $5::jsonb, $6, $7, $8, $9, $10::jsonb, $11::jsonb) AS thread_id";

/** The end with the log's last events (migration 014). */
const FINISH_RUN_WITH_EVENTS =
  "SELECT berth_finish_run($1, $2, $3::jsonb, $4, $5::jsonb, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12::bigint[], $13::text[], $14::text[]) AS thread_id";

const GET_RUN = `SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`;

const INFLIGHT = `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY seq`;

/**
 * Runs over PostgreSQL. SQLite serializes every write transaction; here the
 * transactions that decide a thread's status or inflight runs (create,
 * finish, discard, cancelPending) first lock the thread row, so they take
 * turns per thread, and always thread before run, so they cannot deadlock.
 * The queue operations are in run-queue.ts, the event log in run-events.ts.
 */
export class PostgresRunRepository implements RunRepository {
  constructor(
    private readonly pool: pg.Pool,
    /** Event-log appends commit without waiting for the WAL flush (BERTH_PG_SYNCHRONOUS_COMMIT=events). */
    private readonly asyncEventCommits = false,
  ) {}

  create(run: NewRun, claimFor?: RunClaimant): Promise<CreateRunResult> {
    // One statement, its own transaction (no BEGIN/COMMIT round trips), the claim included.
    return retryingConflicts(() => insertRun(this.pool, run, claimFor));
  }

  async get(runId: string): Promise<QueuedRun | undefined> {
    const { rows } = await prepared<RunRow>(this.pool, "berth_get_run", GET_RUN, [runId]);
    return rows[0] && fromRow(rows[0]);
  }

  async list(threadId: string, query: { limit: number; offset: number; status?: RunStatus }): Promise<Run[]> {
    const params: unknown[] = [threadId];
    const status = query.status ? `AND status = $${params.push(query.status)}` : "";
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 ${status}
        ORDER BY seq DESC LIMIT $${params.push(query.limit)} OFFSET $${params.push(query.offset)}`,
      params,
    );
    return rows.map((row) => toApiRun(fromRow(row)));
  }

  async inflight(threadId: string): Promise<Run[]> {
    return (await this.pool.query<RunRow>(INFLIGHT, [threadId])).rows.map((row) => toApiRun(fromRow(row)));
  }

  async findActive(filter: { thread_id?: string; run_ids?: string[]; status?: "pending" | "running" | "all" }): Promise<Run[]> {
    const params: unknown[] = [];
    const clauses = [
      filter.status === "pending" || filter.status === "running"
        ? `status = $${params.push(filter.status)}`
        : "status IN ('pending', 'running')",
    ];
    if (filter.thread_id) clauses.push(`thread_id = $${params.push(filter.thread_id)}`);
    if (filter.run_ids) clauses.push(`run_id = ANY($${params.push(filter.run_ids)}::text[])`);
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE ${clauses.join(" AND ")} ORDER BY seq`,
      params,
    );
    return rows.map((row) => toApiRun(fromRow(row)));
  }

  async delete(runId: string): Promise<boolean> {
    return ((await this.pool.query("DELETE FROM runs WHERE run_id = $1", [runId])).rowCount ?? 0) > 0;
  }

  claim(owner: string, leaseMs: number, claimedNone?: (pendingLeft: boolean) => void): Promise<QueuedRun | undefined> {
    return queue.claimRun(this.pool, owner, leaseMs, claimedNone);
  }

  heartbeat(owner: string, leaseMs: number, held?: HeldRun[]): Promise<string[]> {
    return queue.heartbeat(this.pool, owner, leaseMs, held);
  }

  release(owner: string, run?: HeldRun): Promise<number> {
    return queue.release(this.pool, owner, run);
  }

  requeueExpired(options: { all: boolean; deadOwners?: string[]; except?: string[] }): Promise<number> {
    return queue.requeueExpired(this.pool, options);
  }

  leaseOwners(): Promise<string[]> {
    return queue.leaseOwners(this.pool);
  }

  nextAvailableAt(): Promise<number | undefined> {
    return queue.nextAvailableAt(this.pool);
  }

  async finish(runId: string, end: RunEnd, lease?: RunLease): Promise<boolean> {
    const now = nowIso();
    const thread = end.thread;
    const params: unknown[] = [
      runId,
      end.status,
      jsonb(end.output ?? null),
      now,
      jsonbOrNull(end.feedbackUrls),
      lease?.owner ?? null,
      lease?.attempt ?? null,
      end.deleteThread ?? false,
      thread.status ?? "idle",
      jsonbOrNull(thread.values),
      jsonb(thread.interrupts),
    ];
    const events = end.events?.length ? end.events : undefined;
    if (events)
      params.push(
        events.map((e) => e.seq),
        events.map((e) => e.event),
        events.map((e) => e.data),
      );
    const [name, text] = events ? ["berth_finish_run_events", FINISH_RUN_WITH_EVENTS] : ["berth_finish_run", FINISH_RUN];
    const finish = async (q: Queryable) =>
      (await prepared<{ thread_id: string | null }>(q, name, text, params)).rows[0].thread_id;
    // Without a webhook, one statement (berth_finish_run, migrations 009 and 014) is the whole transaction.
    if (!end.webhook) return (await retryingConflicts(() => finish(this.pool))) !== null;
    const webhook = end.webhook;
    return withTransaction(this.pool, async (client) => {
      const threadId = await finish(client);
      if (threadId === null) return false;
      await insertWebhook(client, runId, threadId, webhook, now);
      return true;
    });
  }

  async discard(runId: string, thread: ThreadStateSummary, lease?: RunLease): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const threadId = await lockThreadOfRun(client, runId);
      if (threadId === undefined) return false;
      const params: unknown[] = [runId];
      const deleted = await client.query(`DELETE FROM runs WHERE run_id = $1 ${leaseHeld(params, lease)}`, params);
      if (deleted.rowCount !== 1) return false;
      await recordThreadState(client, threadId, thread, nowIso());
      return true;
    });
  }

  async requestCancel(runId: string, action: CancelAction): Promise<boolean> {
    const result = await this.pool.query("UPDATE runs SET cancel_action = $2 WHERE run_id = $1 AND status = 'running'", [
      runId,
      action,
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  async cancelPending(runId: string): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const threadId = await lockThreadOfRun(client, runId);
      if (threadId === undefined) return false;
      const now = nowIso();
      const updated = await client.query(
        "UPDATE runs SET status = 'interrupted', ended_at = $2, updated_at = $2 WHERE run_id = $1 AND status = 'pending'",
        [runId, now],
      );
      if (updated.rowCount === 0) return false;
      // A busy thread settles to idle, or stays busy while other runs wait.
      await client.query(
        `UPDATE threads SET status = ${SETTLED_STATUS}, updated_at = $3 WHERE thread_id = $1 AND status = 'busy'`,
        [threadId, "idle", now],
      );
      return true;
    });
  }

  appendEvents(runId: string, batch: StoredEvent[], lease?: RunLease, threadId?: string): Promise<boolean> {
    return events.appendEvents(this.pool, runId, batch, { lease, threadId, asyncCommit: this.asyncEventCommits });
  }

  readThreadEvents(threadId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return events.readThreadEvents(this.pool, threadId, afterSeq, limit);
  }

  threadEventSeq(threadId: string): Promise<number> {
    return events.threadEventSeq(this.pool, threadId);
  }

  readEvents(runId: string, afterSeq: number): Promise<StoredEvent[]> {
    return events.readEvents(this.pool, runId, afterSeq);
  }

  lastEventSeq(runId: string): Promise<number> {
    return events.lastEventSeq(this.pool, runId);
  }

  pruneEvents(endedBefore: string): Promise<number> {
    return events.pruneEvents(this.pool, endedBefore);
  }
}

/** Locks the thread of a run (a run's thread never changes); undefined when the run does not exist. */
async function lockThreadOfRun(q: Queryable, runId: string): Promise<string | undefined> {
  const { rows } = await q.query<{ thread_id: string }>(
    "SELECT thread_id FROM threads WHERE thread_id = (SELECT thread_id FROM runs WHERE run_id = $1) FOR UPDATE",
    [runId],
  );
  return rows[0]?.thread_id;
}

/** Status $2 for thread $1, except that idle becomes busy while more runs wait: error > interrupted > busy > idle. */
const SETTLED_STATUS = `CASE WHEN $2::text = 'idle' AND EXISTS
  (SELECT 1 FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running')) THEN 'busy' ELSE $2::text END`;

/** The thread's state after a run; the caller holds the thread's lock, so the waiting runs it sees are current. */
async function recordThreadState(q: Queryable, threadId: string, state: ThreadStateSummary, now: string): Promise<void> {
  await q.query(
    `UPDATE threads SET "values" = $3::jsonb, interrupts = $4::jsonb, status = ${SETTLED_STATUS}, updated_at = $5
      WHERE thread_id = $1`,
    [threadId, state.status ?? "idle", jsonbOrNull(state.values), jsonb(state.interrupts), now],
  );
}

/** SQLSTATEs after which a statement that is its own transaction can simply run again (as withTransaction does). */
const RETRYABLE = new Set(["40P01" /* deadlock_detected */, "40001" /* serialization_failure */]);

async function retryingConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= 3 || !RETRYABLE.has(sqlState(err) ?? "")) throw err;
    }
  }
}
