import type { TruncateParts } from "../types.js";
import type { SqliteDatabase } from "./database.js";

const CHECKPOINT_TABLES = ["checkpoint_writes", "checkpoint_blobs", "checkpoints"];

/** Empties the given parts in one transaction (foreign keys cascade to versions, runs and event logs). */
export function truncateSqlite(db: SqliteDatabase, parts: TruncateParts, keepAssistantIds: string[]): void {
  db.transaction(() => {
    if (parts.threads || parts.checkpointer) for (const table of CHECKPOINT_TABLES) db.prepare(`DELETE FROM ${table}`).run();
    if (parts.threads) db.prepare("DELETE FROM threads").run();
    // Deliveries outlive their runs (no foreign key): they go with the runs or threads a reset empties.
    if (parts.threads || parts.runs) db.prepare("DELETE FROM webhook_outbox").run();
    if (parts.runs) {
      // Crons make runs: a reset of the runs stops them too (those of emptied threads or assistants cascade anyway).
      db.prepare("DELETE FROM crons").run();
      db.prepare("DELETE FROM runs").run();
      db.prepare("UPDATE threads SET status = 'idle' WHERE status = 'busy'").run();
    }
    if (parts.assistants) {
      db.prepare("DELETE FROM assistants WHERE assistant_id NOT IN (SELECT value FROM json_each(?))").run(
        JSON.stringify(keepAssistantIds),
      );
    }
    if (parts.store) {
      db.prepare("DELETE FROM store_vectors").run();
      db.prepare("DELETE FROM store_items").run();
    }
  }).immediate();
}
