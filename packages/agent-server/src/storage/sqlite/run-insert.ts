import { toApiRun } from "../run-record.js";
import { RUN_COLUMNS } from "../shared/columns.js";
import { createdThreadMetadata } from "../shared/created-thread.js";
import { nowIso } from "../shared/timestamps.js";
import type { CreateRunResult, NewRun, RunThread } from "../types.js";
import type { SqliteDatabase } from "./database.js";
import { fromRow, type RunRow } from "./run-rows.js";

/**
 * Inserts a run with the multitask check (see RunRepository.create). The
 * caller holds an IMMEDIATE transaction: a run's creation and a cron's claim
 * of its tick commit together. `existingThread`: the settings of the thread
 * the run joined, as the insert left them (not of a thread it created).
 */
export function insertRun(db: SqliteDatabase, run: NewRun): { result: CreateRunResult; existingThread?: RunThread } {
  const now = nowIso();
  const thread = db.prepare("SELECT metadata, config FROM threads WHERE thread_id = ?").get(run.thread_id) as
    | { metadata: string; config: string }
    | undefined;
  if (!thread) {
    if (!run.create_thread) return { result: { kind: "thread_not_found" } };
    db.prepare(
      `INSERT INTO threads (thread_id, status, metadata, config, created_at, updated_at) VALUES (?, 'busy', ?, ?, ?, ?)`,
    ).run(run.thread_id, JSON.stringify(createdThreadMetadata(run)), JSON.stringify(run.thread_config ?? {}), now, now);
  }
  // A thread this insert created has no runs yet.
  const inflight = thread
    ? db
        .prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = ? AND status IN ('pending', 'running') ORDER BY rowid`)
        .all(run.thread_id)
        .map((row) => toApiRun(fromRow(row as RunRow)))
    : [];
  if (inflight.length > 0 && run.multitask_strategy === "reject") return { result: { kind: "thread_busy" } };
  let existingThread: RunThread | undefined;
  if (thread) {
    const metadata = { ...JSON.parse(thread.metadata), graph_id: run.graph_id, assistant_id: run.assistant_id };
    db.prepare("UPDATE threads SET status = 'busy', metadata = ?, updated_at = ? WHERE thread_id = ?").run(
      JSON.stringify(metadata),
      now,
      run.thread_id,
    );
    existingThread = { metadata, config: JSON.parse(thread.config) };
  }
  const inserted = db
    .prepare(
      `INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at, available_at)
       VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?) RETURNING ${RUN_COLUMNS}`,
    )
    .get(
      run.run_id,
      run.thread_id,
      run.assistant_id,
      JSON.stringify(run.metadata),
      JSON.stringify(run.kwargs),
      run.multitask_strategy,
      now,
      now,
      run.available_at,
    ) as RunRow;
  const created = toApiRun(fromRow(inserted));
  return { result: { kind: "created", run: created, inflight }, ...(existingThread ? { existingThread } : {}) };
}
