// The persisted stream log of runs (run_events) on SQLite.
import type { RunLease, StoredEvent } from "../types.js";
import type { SqliteDatabase } from "./database.js";
import { type GroupCommit, groupCommitOf } from "./group-commit.js";
import { LEASE_HELD, leaseParams } from "./run-rows.js";

export class SqliteRunEvents {
  private readonly statements;
  private readonly group: GroupCommit;

  constructor(private readonly db: SqliteDatabase) {
    this.group = groupCommitOf(db);
    this.statements = {
      insert: db.prepare("INSERT OR IGNORE INTO run_events (run_id, seq, event, data) VALUES (?, ?, ?, ?)"),
      read: db.prepare("SELECT seq, event, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq"),
      leaseHeld: db.prepare(`SELECT 1 FROM runs WHERE run_id = ? ${LEASE_HELD}`),
      raiseThreadSeq: db.prepare("UPDATE threads SET event_seq = max(event_seq, ?) WHERE thread_id = ?"),
      readThread: db.prepare(
        `SELECT e.seq, e.event, e.data FROM runs r
           JOIN run_events e ON e.run_id = r.run_id AND e.seq > ? AND e.event = 'protocol'
         WHERE r.thread_id = ? ORDER BY e.seq LIMIT ?`,
      ),
      threadSeq: db.prepare("SELECT event_seq FROM threads WHERE thread_id = ?"),
    };
  }

  /**
   * Appends events in one transaction; an event already logged (same seq) is
   * kept. With `lease`, only while that claim holds the run: false when it
   * does not. With `threadId`, raises the thread's protocol sequence too.
   */
  appendEvents(runId: string, events: StoredEvent[], lease?: RunLease, threadId?: string): Promise<boolean> {
    return this.group.run(() => {
      if (lease && !this.statements.leaseHeld.get(runId, ...leaseParams(lease))) return false;
      this.insertInTransaction(runId, events);
      const last = events.at(-1);
      if (threadId && last) this.statements.raiseThreadSeq.run(last.seq, threadId);
      return true;
    }, eventsTopic(runId));
  }

  /** Logs events inside the caller's transaction (a run's end), an event already logged kept. */
  insertInTransaction(runId: string, events: StoredEvent[]): void {
    for (const event of events) this.statements.insert.run(runId, event.seq, event.event, event.data);
  }

  readEvents(runId: string, afterSeq: number): StoredEvent[] {
    this.group.flush(eventsTopic(runId));
    return this.statements.read.all(runId, afterSeq) as StoredEvent[];
  }

  lastEventSeq(runId: string): number {
    this.group.flush(eventsTopic(runId));
    const row = this.db.prepare("SELECT max(seq) AS seq FROM run_events WHERE run_id = ?").get(runId) as { seq: number | null };
    return row.seq ?? -1;
  }

  readThreadEvents(threadId: string, afterSeq: number, limit: number): StoredEvent[] {
    this.group.flush();
    return this.statements.readThread.all(afterSeq, threadId, limit) as StoredEvent[];
  }

  threadEventSeq(threadId: string): number {
    this.group.flush();
    const row = this.statements.threadSeq.get(threadId) as { event_seq: number } | undefined;
    return row?.event_seq ?? 0;
  }

  /** Deletes the event logs of runs that ended before `endedBefore` (ISO). */
  pruneEvents(endedBefore: string): number {
    return this.db
      .prepare("DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM runs WHERE ended_at IS NOT NULL AND ended_at < ?)")
      .run(endedBefore).changes;
  }
}

/** The group-commit topic of a run's event log. */
export function eventsTopic(runId: string): string {
  return `events:${runId}`;
}
