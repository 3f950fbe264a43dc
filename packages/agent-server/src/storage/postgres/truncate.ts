import type pg from "pg";
import type { TruncateParts } from "../types.js";
import { withTransaction } from "./database.js";

const CHECKPOINT_TABLES = ["checkpoint_writes", "checkpoint_blobs", "checkpoints"];

/** Empties the given parts in one transaction (foreign keys cascade to versions, runs and event logs). */
export async function truncatePostgres(pool: pg.Pool, parts: TruncateParts, keepAssistantIds: string[]): Promise<void> {
  await withTransaction(pool, async (client) => {
    if (parts.threads || parts.checkpointer) for (const table of CHECKPOINT_TABLES) await client.query(`DELETE FROM ${table}`);
    if (parts.threads) await client.query("DELETE FROM threads");
    // Deliveries outlive their runs (no foreign key): they go with the runs or threads a reset empties.
    if (parts.threads || parts.runs) await client.query("DELETE FROM webhook_outbox");
    if (parts.runs) {
      // Crons make runs: a reset of the runs stops them too (those of emptied threads or assistants cascade anyway).
      await client.query("DELETE FROM crons");
      await client.query("DELETE FROM runs");
      await client.query("UPDATE threads SET status = 'idle' WHERE status = 'busy'");
    }
    if (parts.assistants)
      await client.query("DELETE FROM assistants WHERE NOT (assistant_id = ANY($1::text[]))", [keepAssistantIds]);
    if (parts.store) {
      await client.query("DELETE FROM store_vectors");
      await client.query("DELETE FROM store_items");
    }
  });
}
