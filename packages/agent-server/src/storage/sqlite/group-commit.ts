import type { Transaction } from "better-sqlite3";
import type { SqliteDatabase } from "./database.js";

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface QueuedWrite {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes queued within one turn of the event loop (checkpoints, event-log
 * batches: many runs write at once under load) commit together, in one
 * IMMEDIATE transaction: a commit costs more than most of the writes it
 * carries. Each write resolves only once that transaction committed; a write
 * that throws is rolled back alone (a savepoint inside the shared transaction,
 * when it shares it) and rejects alone.
 */
export class GroupCommit {
  private queue: QueuedWrite[] = [];
  private readonly queuedTopics = new Set<string>();
  private scheduled = false;
  /** Runs one write: as the IMMEDIATE transaction itself, or nested (a savepoint) inside a batch's. */
  private readonly write: Transaction<(work: () => unknown) => unknown>;
  private readonly batch: Transaction<(batch: QueuedWrite[], outcomes: Outcome[]) => void>;

  constructor(db: SqliteDatabase) {
    // Made once: a transaction function costs more to make than a small write costs to run.
    this.write = db.transaction((work: () => unknown) => work());
    this.batch = db.transaction((batch: QueuedWrite[], outcomes: Outcome[]) => {
      for (const write of batch) {
        try {
          outcomes.push({ ok: true, value: this.write(write.work) });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
    });
  }

  run<T>(work: () => T, topic?: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (topic !== undefined) this.queuedTopics.add(topic);
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.commit());
    });
  }

  /**
   * Commits what is queued now: a read that must see those writes calls it
   * first. With a `topic` (a thread's checkpoints, a run's events), only when
   * a queued write has that topic: under load most reads concern rows nobody
   * is writing, and committing early for them would split the batch into
   * many small transactions.
   */
  flush(topic?: string): void {
    if (this.queue.length === 0) return;
    if (topic === undefined || this.queuedTopics.has(topic)) this.commit();
  }

  private commit(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    this.queuedTopics.clear();
    if (batch.length === 0) return;
    if (batch.length === 1) {
      // Alone in its transaction: no savepoint needed, its failure rolls the whole transaction back.
      const [write] = batch;
      let value: unknown;
      try {
        value = this.write.immediate(write.work);
      } catch (error) {
        write.reject(error);
        return;
      }
      write.resolve(value);
      return;
    }
    const outcomes: Outcome[] = [];
    try {
      this.batch.immediate(batch, outcomes);
    } catch (error) {
      // The commit itself failed (busy, disk full): none of the writes is in the database.
      for (const write of batch) write.reject(error);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  }
}

const groups = new WeakMap<SqliteDatabase, GroupCommit>();

/** The one group commit of a connection: every repository of it queues into the same transaction. */
export function groupCommitOf(db: SqliteDatabase): GroupCommit {
  let group = groups.get(db);
  if (!group) groups.set(db, (group = new GroupCommit(db)));
  return group;
}
