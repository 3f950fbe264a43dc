import type { StoreRepository } from "../memory-store-types.js";
import type { StorageSizes } from "../types.js";
import type { SqliteDatabase } from "./database.js";

// length() of a BLOB is its bytes; TEXT is cast so multi-byte characters count as bytes too.
const bytes = (column: string) => `coalesce(length(CAST(${column} AS BLOB)), 0)`;

/** Counts and stored bytes per part, read in one transaction (one consistent snapshot). */
export async function sqliteSizes(db: SqliteDatabase, store: StoreRepository): Promise<StorageSizes> {
  const part = (sql: string) => {
    const row = db.prepare(sql).get() as { count: number; bytes: number | null };
    return { count: row.count, bytes: row.bytes ?? 0 };
  };
  const sizes = db.transaction(() => {
    const threads = part(
      `SELECT count(*) AS count, sum(${bytes("metadata")} + ${bytes("config")} + ${bytes('"values"')} + ${bytes("interrupts")})
       AS bytes FROM threads`,
    );
    const checkpoints = part(
      `SELECT count(*) AS count, sum(${bytes("checkpoint")} + ${bytes("metadata")}) AS bytes FROM checkpoints`,
    );
    const blobs = part(`SELECT count(*) AS count, sum(${bytes("blob")}) AS bytes FROM checkpoint_blobs`);
    const writes = part(`SELECT count(*) AS count, sum(${bytes("value")}) AS bytes FROM checkpoint_writes`);
    const events = part(`SELECT count(*) AS count, sum(${bytes("event")} + ${bytes("data")}) AS bytes FROM run_events`);
    return {
      threads,
      checkpoints: { count: checkpoints.count, bytes: checkpoints.bytes + blobs.bytes + writes.bytes },
      run_events: events,
    };
  })();
  const items = await store.size();
  return { backend: "sqlite", ...sizes, store_items: { count: items.items, bytes: items.bytes } };
}
