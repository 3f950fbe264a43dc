import type { RunCounts } from "../types.js";
import type { SqliteDatabase } from "./database.js";

/** Pending (available now) and running runs, in one statement over the queue's index (status, available_at). */
export async function sqliteRunCounts(db: SqliteDatabase): Promise<RunCounts> {
  const row = db
    .prepare(
      `SELECT (SELECT count(*) FROM runs WHERE status = 'pending' AND available_at <= ?) AS pending,
              (SELECT count(*) FROM runs WHERE status = 'running') AS running`,
    )
    .get(Date.now()) as { pending: number; running: number };
  return { pending: Number(row.pending), running: Number(row.running) };
}
