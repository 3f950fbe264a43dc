import type { RunCounts } from "../types.js";
import type { SqliteDatabase } from "./database.js";

/** Pending (available now) and running runs, in one statement over the queue's index (status, available_at). */
export async function sqliteRunCounts(db: SqliteDatabase): Promise<RunCounts> {
  const now = Date.now();
  const row = db
    .prepare(
      `SELECT (SELECT count(*) FROM runs WHERE status = 'pending' AND available_at <= ?) AS pending,
              (SELECT count(*) FROM runs WHERE status = 'running') AS running,
              (SELECT min(available_at) FROM runs WHERE status = 'pending' AND available_at > ?) AS next_delayed`,
    )
    .get(now, now) as { pending: number; running: number; next_delayed: number | null };
  const nextDelayedAt = row.next_delayed === null ? null : Number(row.next_delayed);
  return { pending: Number(row.pending), running: Number(row.running), nextDelayedAt };
}
