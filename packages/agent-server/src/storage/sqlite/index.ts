import type { SqliteWriteLock } from "@berth/service-kit";
import { join } from "node:path";
import { threadLeaseKeeper } from "../shared/lease-thread.js";
import type { BerthCheckpointer, Storage } from "../types.js";
import { SqliteAssistantRepository } from "./assistants.js";
import { SqliteCheckpointTables } from "./checkpoint-tables.js";
import { SqliteCronRepository } from "./crons.js";
import { openSqliteDatabase, type SqliteSynchronous } from "./database.js";
import { sqliteRunCounts } from "./run-counts.js";
import { SqliteRunRepository } from "./runs.js";
import { sqliteSizes } from "./sizes.js";
import { SqliteStoreRepository } from "./memory-store.js";
import { SqliteThreadRepository } from "./threads.js";
import { truncateSqlite } from "./truncate.js";
import { checkpointInBackground, leaveCheckpointsToAnother } from "./wal-checkpoints.js";
import { SqliteWebhookOutbox } from "./webhook-outbox.js";

export interface SqliteStorageOptions {
  /**
   * Other processes use the file too (BERTH_SQLITE_SHARED): they requeue runs
   * whose lease lapsed, so leases are renewed off the main thread.
   */
  shared?: boolean;
  /** Another connection of this process checkpoints the WAL (the main thread's, for the execution thread's). */
  checkpointsElsewhere?: boolean;
  /** Taken by every write, with the other threads of this process that write the file (the execution thread's). */
  writeLock?: SqliteWriteLock;
}

/** The embedded storage: one SQLite file (WAL) under the data directory. */
export function createSqliteStorage(
  dataDir: string,
  synchronous: SqliteSynchronous = "full",
  options: SqliteStorageOptions = {},
): Storage {
  const file = join(dataDir, "berth.sqlite");
  const db = openSqliteDatabase(file, synchronous, options.writeLock);
  // Group commits make each write a savepoint, whose statement journal SQLite spills to a temporary file past 64 KiB:
  // ~40 of a thread run's ~110 write calls went there. In memory they cost none (set after the migrations, whose
  // statements may rewrite whole tables).
  db.pragma("temp_store = MEMORY");
  const stopCheckpoints = options.checkpointsElsewhere ? leaveCheckpointsToAnother(db) : checkpointInBackground(db, file);
  let loading: Promise<BerthCheckpointer> | undefined;
  const checkpointer = () =>
    (loading ??= import("./checkpointer.js").then(({ SqliteCheckpointer }) => new SqliteCheckpointer(db)));
  const store = new SqliteStoreRepository(db);
  return {
    assistants: new SqliteAssistantRepository(db),
    threads: new SqliteThreadRepository(db, new SqliteCheckpointTables(db), checkpointer),
    runs: new SqliteRunRepository(db),
    crons: new SqliteCronRepository(db),
    checkpointer,
    store,
    webhooks: new SqliteWebhookOutbox(db),
    ...(options.shared ? { keepLeases: threadLeaseKeeper(new URL("./lease-heartbeat.mjs", import.meta.url), { file }) } : {}),
    async truncate(parts, keepAssistantIds) {
      truncateSqlite(db, parts, keepAssistantIds);
    },
    sizes: () => sqliteSizes(db, store),
    runCounts: () => sqliteRunCounts(db),
    async close() {
      await stopCheckpoints();
      db.close();
    },
  };
}
