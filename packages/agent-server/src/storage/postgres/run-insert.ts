import { jsonb } from "@berth/service-kit";
import { toApiRun } from "../run-record.js";
import { RUN_COLUMNS } from "../shared/columns.js";
import { nowIso } from "../shared/timestamps.js";
import type { CreateRunResult, NewRun } from "../types.js";
import type { Queryable } from "./database.js";
import { fromRow, type RunRow } from "./run-rows.js";

/**
 * Inserts a run with the multitask check (see RunRepository.create), inside
 * the caller's transaction: a run's creation and a cron's claim of its tick
 * commit together. Locks the thread row first, as every transaction that
 * decides a thread's status does (runs.ts).
 */
export async function insertRun(client: Queryable, run: NewRun): Promise<CreateRunResult> {
  const now = nowIso();
  let created = false;
  // Lock the thread, or create it; when a concurrent request creates it
  // first, the insert waits for that one to commit and we lock it then.
  while (!(await lockThread(client, run.thread_id))) {
    if (!run.create_thread) return { kind: "thread_not_found" };
    const inserted = await client.query(
      `INSERT INTO threads (thread_id, status, metadata, config, created_at, updated_at)
       VALUES ($1, 'busy', $2::jsonb, $3::jsonb, $4, $4) ON CONFLICT (thread_id) DO NOTHING`,
      [
        run.thread_id,
        jsonb({ ...run.thread_metadata, graph_id: run.graph_id, assistant_id: run.assistant_id }),
        jsonb(run.thread_config ?? {}),
        now,
      ],
    );
    if (inserted.rowCount === 1) {
      created = true;
      break;
    }
  }
  const inflight = (
    await client.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY seq`,
      [run.thread_id],
    )
  ).rows.map((row) => toApiRun(fromRow(row)));
  if (inflight.length > 0 && run.multitask_strategy === "reject") return { kind: "thread_busy" };
  if (!created) {
    await client.query(
      `UPDATE threads SET status = 'busy', updated_at = $2,
         metadata = metadata || jsonb_build_object('graph_id', $3::text, 'assistant_id', $4::text)
       WHERE thread_id = $1`,
      [run.thread_id, now, run.graph_id, run.assistant_id],
    );
  }
  const { rows } = await client.query<RunRow>(
    `INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at, available_at)
     VALUES ($1, $2, $3, 'pending', $4::jsonb, $5::jsonb, $6, $7, $7, $8) RETURNING ${RUN_COLUMNS}`,
    [
      run.run_id,
      run.thread_id,
      run.assistant_id,
      jsonb(run.metadata),
      jsonb(run.kwargs),
      run.multitask_strategy,
      now,
      run.available_at,
    ],
  );
  return { kind: "created", run: toApiRun(fromRow(rows[0])), inflight };
}

/** Locks a thread row for the rest of the transaction; false when there is no such thread. */
async function lockThread(q: Queryable, threadId: string): Promise<boolean> {
  return (await q.query("SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE", [threadId])).rowCount === 1;
}
