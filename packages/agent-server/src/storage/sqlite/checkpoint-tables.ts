import { CHECKPOINT_BLOB_COLUMNS, CHECKPOINT_COLUMNS, CHECKPOINT_WRITE_COLUMNS } from "../shared/columns.js";
import type { SqliteDatabase } from "./database.js";

type CopyParams = { source: string; target: string };
type RunParams = { thread_id: string; run_id: string };

function prepare(db: SqliteDatabase) {
  const ofThread = (table: string) => db.prepare<[string]>(`DELETE FROM ${table} WHERE thread_id = ?`);
  const deleteThreadWrites = ofThread("checkpoint_writes");
  const deleteThreadBlobs = ofThread("checkpoint_blobs");
  const deleteThreadCheckpoints = ofThread("checkpoints");
  const copyCheckpoints = db.prepare<CopyParams>(
    `INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}, metadata, created_at)
     SELECT @target, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
       CASE WHEN json_type(metadata, '$.thread_id') IS NULL THEN metadata
            ELSE json_set(metadata, '$.thread_id', @target) END,
       created_at
     FROM checkpoints WHERE thread_id = @source`,
  );
  const copyWrites = db.prepare<CopyParams>(
    `INSERT INTO checkpoint_writes (${CHECKPOINT_WRITE_COLUMNS})
     SELECT @target, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
     FROM checkpoint_writes WHERE thread_id = @source`,
  );
  const copyBlobs = db.prepare<CopyParams>(
    `INSERT INTO checkpoint_blobs (${CHECKPOINT_BLOB_COLUMNS})
     SELECT @target, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = @source`,
  );
  const OF_RUN = "thread_id = @thread_id AND json_extract(metadata, '$.run_id') = @run_id";
  const deleteRunWrites = db.prepare<RunParams>(
    `DELETE FROM checkpoint_writes WHERE thread_id = @thread_id AND (checkpoint_ns, checkpoint_id) IN
       (SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE ${OF_RUN})`,
  );
  const deleteRunCheckpoints = db.prepare<RunParams>(`DELETE FROM checkpoints WHERE ${OF_RUN}`);
  return {
    deleteThread: db.transaction((threadId: string) => {
      deleteThreadWrites.run(threadId);
      deleteThreadBlobs.run(threadId);
      deleteThreadCheckpoints.run(threadId);
    }),
    copyThread: db.transaction((params: CopyParams) => {
      copyCheckpoints.run(params);
      copyWrites.run(params);
      copyBlobs.run(params);
    }),
    deleteRun: db.transaction((params: RunParams) => {
      deleteRunWrites.run(params); // first: it finds the writes through the checkpoints deleted next
      deleteRunCheckpoints.run(params);
      // Blobs stay: they belong to (channel, version) pairs, which checkpoints of
      // other runs (later ones, forks, copies via "__copy__") may still reference.
    }),
  };
}

/**
 * The thread-wide operations on the checkpoint tables, which need nothing of
 * LangGraph: the thread repository runs them inside its own transactions, in
 * a process that may not have loaded LangGraph yet (the checkpointer does).
 */
export class SqliteCheckpointTables {
  private readonly sql: ReturnType<typeof prepare>;

  constructor(db: SqliteDatabase) {
    this.sql = prepare(db);
  }

  /** Deletes the checkpoints, writes and channel values of a thread. */
  deleteThread(threadId: string): void {
    this.sql.deleteThread.immediate(threadId);
  }

  /** Copies every checkpoint, write and channel value of a thread to a new thread id (which must have none yet). */
  copyThread(sourceThreadId: string, targetThreadId: string): void {
    this.sql.copyThread.immediate({ source: sourceThreadId, target: targetThreadId });
  }

  /**
   * Deletes the checkpoints written by one run (metadata.run_id) and their
   * writes. Channel values stay, as other checkpoints may share them.
   */
  deleteRun(threadId: string, runId: string): void {
    this.sql.deleteRun.immediate({ thread_id: threadId, run_id: runId });
  }
}
