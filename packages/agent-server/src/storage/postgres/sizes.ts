import type pg from "pg";
import type { StoreRepository } from "../memory-store-types.js";
import type { StorageSizes } from "../types.js";

/** Counts, and each part's total relation size (O(1): PostgreSQL keeps it), rather than summing every column. */
export async function postgresSizes(pool: pg.Pool, store: StoreRepository): Promise<StorageSizes> {
  const size = (table: string) => `pg_total_relation_size(to_regclass('${table}'))`;
  const { rows } = await pool.query<Record<string, string>>(
    `SELECT (SELECT count(*) FROM threads) AS threads,
            ${size("threads")} AS threads_bytes,
            (SELECT count(*) FROM checkpoints) AS checkpoints,
            ${size("checkpoints")} + ${size("checkpoint_blobs")} + ${size("checkpoint_writes")} AS checkpoints_bytes,
            (SELECT count(*) FROM run_events) AS run_events,
            ${size("run_events")} AS run_events_bytes`,
  );
  const row = rows[0];
  const part = (name: string) => ({ count: Number(row[name]), bytes: Number(row[`${name}_bytes`] ?? 0) });
  const items = await store.size();
  return {
    backend: "postgres",
    threads: part("threads"),
    checkpoints: part("checkpoints"),
    store_items: { count: Number(items.items), bytes: Number(items.bytes) },
    run_events: part("run_events"),
  };
}
