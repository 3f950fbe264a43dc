import type pg from "pg";
import type { RunCounts } from "../types.js";

/** Pending (available now) and running runs of every process, in one statement over the pending runs' index and the running runs' one. */
export async function postgresRunCounts(pool: pg.Pool): Promise<RunCounts> {
  // count(*) is a bigint, which pg returns as a string.
  const { rows } = await pool.query<{ pending: string; running: string; next_delayed: string | null }>(
    `SELECT (SELECT count(*) FROM runs WHERE status = 'pending' AND available_at <= $1) AS pending,
            (SELECT count(*) FROM runs WHERE status = 'running') AS running,
            (SELECT min(available_at) FROM runs WHERE status = 'pending' AND available_at > $1) AS next_delayed`,
    [Date.now()],
  );
  const row = rows[0]!;
  const nextDelayedAt = row.next_delayed === null ? null : Number(row.next_delayed);
  return { pending: Number(row.pending), running: Number(row.running), nextDelayedAt };
}
