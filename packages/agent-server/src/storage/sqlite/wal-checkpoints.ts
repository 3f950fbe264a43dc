import { statSync } from "node:fs";
import { Worker } from "node:worker_threads";
import type { SqliteDatabase } from "./database.js";

/** How often the thread checkpoints: the WAL stays a few MB under load. */
const CHECKPOINT_INTERVAL_MS = 250;

/**
 * Pages in the WAL past which a commit checkpoints inline anyway (SQLite's
 * default is 1,000): only if the checkpoint thread falls far behind.
 */
const INLINE_CHECKPOINT_PAGES = 20_000;

/** How often the WAL's size is looked at until the thread starts. */
const WAL_WATCH_MS = 1_000;

/**
 * The WAL size that starts the thread: a server that writes little (idle, or
 * a developer's few runs) never pays the thread's ~10 MB; one under load
 * passes it within a second.
 */
const THREAD_START_WAL_BYTES = 1024 * 1024;

/** How long a stopping thread may take to close its connection before it is terminated. */
const STOP_WAIT_MS = 2_000;

function walBytes(file: string): number {
  return statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
}

/**
 * Moves WAL checkpoints off the main thread once the database is written to
 * in earnest: a checkpoint copies the WAL's pages into the database and syncs
 * it, which SQLite otherwise does inside whichever commit crosses 1,000 pages,
 * stalling every request meanwhile. Until then SQLite checkpoints as it does
 * by default. Durability is unchanged: a commit is durable once in the WAL.
 */
export function checkpointInBackground(db: SqliteDatabase, file: string): () => Promise<void> {
  let stopThread: (() => Promise<void>) | undefined;
  const watch = setInterval(() => {
    if (walBytes(file) < THREAD_START_WAL_BYTES || !db.open) return;
    clearInterval(watch);
    stopThread = startThread(db, file);
  }, WAL_WATCH_MS);
  watch.unref();
  return async () => {
    clearInterval(watch);
    await stopThread?.();
  };
}

/**
 * For a second connection of a process whose first one checkpoints in the
 * background (the execution thread's): its commits leave checkpoints to that
 * one, unless the WAL grows far past it.
 */
export function leaveCheckpointsToAnother(db: SqliteDatabase): () => Promise<void> {
  db.pragma(`wal_autocheckpoint = ${INLINE_CHECKPOINT_PAGES}`);
  return async () => {};
}

function startThread(db: SqliteDatabase, file: string): () => Promise<void> {
  db.pragma(`wal_autocheckpoint = ${INLINE_CHECKPOINT_PAGES}`);
  const thread = new Worker(new URL("./wal-checkpointer.mjs", import.meta.url), {
    workerData: { file, intervalMs: CHECKPOINT_INTERVAL_MS },
  });
  thread.unref();
  // Should the thread fail, commits checkpoint inline again, as SQLite does by default.
  thread.on("error", () => db.open && db.pragma("wal_autocheckpoint = 1000"));
  const exited = new Promise((resolve) => thread.once("exit", resolve));
  return async () => {
    thread.postMessage("stop");
    const ending = setTimeout(() => void thread.terminate(), STOP_WAIT_MS);
    await exited;
    clearTimeout(ending);
  };
}
