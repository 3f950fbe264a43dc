import type { WriteRow } from "../shared/checkpoint-rows.js";
import { type CheckpointInsert, insertCheckpoint, insertCheckpointBatch, insertWrites } from "./checkpoint-sql.js";
import type { Queryable } from "./database.js";

type QueuedWrite =
  | { kind: "checkpoint"; insert: CheckpointInsert; resolve: () => void; reject: (error: unknown) => void }
  | { kind: "writes"; rows: WriteRow[]; resolve: () => void; reject: (error: unknown) => void };

/**
 * Checkpoint writes of every run of the process, sent to PostgreSQL as one
 * statement while the one before is on its way: under load many runs write
 * checkpoints at once, and a round trip costs both processes more than the
 * rows it carries. Alone, a write goes out at once (in the next microtask).
 * One batch at a time keeps the writes in the order they were made, as one
 * statement per write on a single connection would. A write resolves once
 * its batch committed; when a batch fails, its writes are sent again one by
 * one, so only a write that fails alone rejects.
 */
export class CheckpointWriteBatch {
  private queue: QueuedWrite[] = [];
  private sending = false;

  constructor(private readonly db: Queryable) {}

  putCheckpoint(insert: CheckpointInsert): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "checkpoint", insert, resolve, reject }));
  }

  putWrites(rows: WriteRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => this.enqueue({ kind: "writes", rows, resolve, reject }));
  }

  private enqueue(write: QueuedWrite): void {
    this.queue.push(write);
    if (this.sending) return;
    this.sending = true;
    queueMicrotask(() => void this.sendQueued());
  }

  private async sendQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.send(batch);
    }
    this.sending = false;
  }

  private async send(batch: QueuedWrite[]): Promise<void> {
    if (batch.length === 1) return this.sendAlone(batch[0]!);
    const checkpoints: CheckpointInsert[] = [];
    const writes: WriteRow[] = [];
    for (const write of batch) {
      if (write.kind === "checkpoint") checkpoints.push(write.insert);
      else writes.push(...write.rows);
    }
    try {
      await insertCheckpointBatch(this.db, checkpoints, writes);
    } catch {
      for (const write of batch) await this.sendAlone(write);
      return;
    }
    for (const write of batch) write.resolve();
  }

  private async sendAlone(write: QueuedWrite): Promise<void> {
    try {
      if (write.kind === "checkpoint") await insertCheckpoint(this.db, write.insert);
      else await insertWrites(this.db, write.rows);
      write.resolve();
    } catch (error) {
      write.reject(error);
    }
  }
}
