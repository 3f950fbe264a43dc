// The persisted stream log of runs (run_events).
import type { RunLease, StoredEvent } from "../types.js";
import type { Queryable } from "./database.js";
import { prepared } from "./prepared.js";
import { leaseHeld } from "./run-rows.js";

/** How a batch of events is logged. */
export interface AppendOptions {
  /** Only while this claim holds the run. */
  lease?: RunLease;
  /** A protocol v2 run's thread, whose protocol sequence the batch raises. */
  threadId?: string;
  /** The statement's transaction does not wait for the WAL flush. */
  asyncCommit?: boolean;
}

/**
 * Appends events in one statement; an event already logged (same seq) is
 * kept, as SQLite's INSERT OR IGNORE. With a `lease`, only while that claim
 * holds the run (its row share-locked meanwhile, so a requeue cannot slip
 * between the check and the insert): false when it does not. With
 * `asyncCommit`, the statement's transaction does not wait for the WAL flush
 * (BERTH_PG_SYNCHRONOUS_COMMIT=events): the run's end, committed
 * synchronously, flushes these batches with it. With `threadId`, the
 * thread's protocol sequence is raised to the batch's last seq in the same
 * statement.
 */
export async function appendEvents(
  q: Queryable,
  runId: string,
  events: StoredEvent[],
  { lease, threadId, asyncCommit = false }: AppendOptions = {},
): Promise<boolean> {
  if (events.length === 0) return true;
  const params: unknown[] = [runId, events.map((e) => e.seq), events.map((e) => e.event), events.map((e) => e.data)];
  const held = leaseHeld(params, lease);
  const [commit, evaluated] = asyncCommit ? [ASYNC_COMMIT, " FROM async_commit"] : ["", ""];
  const raise = threadId
    ? `, raised AS (UPDATE threads SET event_seq = GREATEST(event_seq, $${params.push(events.at(-1)!.seq)})
         WHERE thread_id = $${params.push(threadId)}${lease ? " AND EXISTS (SELECT 1 FROM lease)" : ""})`
    : "";
  const name = `berth_append_events_${lease ? "lease" : "any"}_${asyncCommit ? "async" : "sync"}${threadId ? "_thread" : ""}`;
  if (!lease) {
    await prepared(q, name, `WITH ${commit} logged AS (${INSERT_EVENTS})${raise} SELECT 1${evaluated}`, params);
    return true;
  }
  const { rows } = await prepared<{ held: boolean }>(
    q,
    name,
    `WITH ${commit} lease AS MATERIALIZED (
       SELECT 1 FROM runs WHERE run_id = $1 ${held} FOR SHARE
     ), logged AS (
       INSERT INTO run_events (run_id, seq, event, data) ${EVENT_ROWS} WHERE EXISTS (SELECT 1 FROM lease)
       ON CONFLICT (run_id, seq) DO NOTHING
     )${raise}
     SELECT EXISTS (SELECT 1 FROM lease) AS held${evaluated}`,
    params,
  );
  return rows[0].held;
}

/** The rows of $2..$4 (seqs, names, data) for run $1. */
const EVENT_ROWS = "SELECT $1, e.seq, e.event, e.data FROM unnest($2::bigint[], $3::text[], $4::text[]) AS e(seq, event, data)";

const INSERT_EVENTS = `INSERT INTO run_events (run_id, seq, event, data) ${EVENT_ROWS} ON CONFLICT (run_id, seq) DO NOTHING`;

/** A CTE that makes the statement's own transaction commit without waiting for the WAL flush (once the query reads it). */
const ASYNC_COMMIT = "async_commit AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true)),";

export async function readEvents(q: Queryable, runId: string, afterSeq: number): Promise<StoredEvent[]> {
  const { rows } = await q.query<StoredEvent>(
    "SELECT seq, event, data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq",
    [runId, afterSeq],
  );
  return rows;
}

export async function lastEventSeq(q: Queryable, runId: string): Promise<number> {
  const { rows } = await prepared<{ seq: number | null }>(
    q,
    "berth_last_event_seq",
    "SELECT max(seq) AS seq FROM run_events WHERE run_id = $1",
    [runId],
  );
  return rows[0].seq ?? -1;
}

export async function readThreadEvents(q: Queryable, threadId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
  const { rows } = await prepared<StoredEvent>(
    q,
    "berth_read_thread_events",
    `SELECT e.seq, e.event, e.data FROM runs r
       JOIN run_events e ON e.run_id = r.run_id AND e.seq > $2 AND e.event = 'protocol'
     WHERE r.thread_id = $1 ORDER BY e.seq LIMIT $3`,
    [threadId, afterSeq, limit],
  );
  return rows;
}

export async function threadEventSeq(q: Queryable, threadId: string): Promise<number> {
  const { rows } = await prepared<{ event_seq: number }>(
    q,
    "berth_thread_event_seq",
    "SELECT event_seq FROM threads WHERE thread_id = $1",
    [threadId],
  );
  return rows[0]?.event_seq ?? 0;
}

/** Deletes the event logs of runs that ended before `endedBefore` (ISO). */
export async function pruneEvents(q: Queryable, endedBefore: string): Promise<number> {
  const result = await q.query(
    `DELETE FROM run_events WHERE run_id IN
       (SELECT run_id FROM runs WHERE ended_at IS NOT NULL AND ended_at < $1::timestamptz)`,
    [endedBefore],
  );
  return result.rowCount ?? 0;
}
