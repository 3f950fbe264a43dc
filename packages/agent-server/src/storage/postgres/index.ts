import { threadLeaseKeeper } from "../shared/lease-thread.js";
import type { BerthCheckpointer, Storage } from "../types.js";
import { PostgresAssistantRepository } from "./assistants.js";
import { PostgresCronRepository } from "./crons.js";
import { openPostgresDatabase } from "./database.js";
import { postgresRunCounts } from "./run-counts.js";
import { PostgresRunRepository } from "./runs.js";
import { postgresSizes } from "./sizes.js";
import { PostgresStoreRepository } from "./memory-store.js";
import { PostgresThreadRepository } from "./threads.js";
import { truncatePostgres } from "./truncate.js";
import { PostgresWebhookOutbox } from "./webhook-outbox.js";

export interface PostgresStorageOptions {
  /** Most connections the pool opens (default 10). */
  poolSize?: number;
  /**
   * Which commits wait for PostgreSQL's WAL flush: `on` (default) all of them;
   * `events` all but the event log's appends; `off` none (docs/scaling.md says
   * what each risks when PostgreSQL crashes).
   */
  synchronousCommit?: "on" | "events" | "off";
}

/**
 * Storage in a PostgreSQL database that several Berth processes may share:
 * `url` is a libpq connection URI (postgres://user@host:5432/db; a schema
 * other than public through `?options=-c%20search_path%3Dname`). Migrations
 * are applied before this resolves.
 */
export async function createPostgresStorage(url: string, options: PostgresStorageOptions = {}): Promise<Storage> {
  const synchronousCommit = options.synchronousCommit ?? "on";
  const pool = await openPostgresDatabase(synchronousCommit === "off" ? withAsyncCommits(url) : url, options.poolSize);
  let closing: Promise<void> | undefined;
  let loading: Promise<BerthCheckpointer> | undefined;
  const checkpointer = () =>
    (loading ??= import("./checkpointer.js").then(({ PostgresCheckpointer }) => new PostgresCheckpointer(pool)));
  const store = new PostgresStoreRepository(pool);
  return {
    assistants: new PostgresAssistantRepository(pool),
    threads: new PostgresThreadRepository(pool, checkpointer),
    runs: new PostgresRunRepository(pool, synchronousCommit === "events"),
    crons: new PostgresCronRepository(pool),
    checkpointer,
    store,
    webhooks: new PostgresWebhookOutbox(pool),
    keepLeases: threadLeaseKeeper(new URL("./lease-heartbeat.mjs", import.meta.url), { databaseUrl: url }),
    truncate: (parts, keepAssistantIds) => truncatePostgres(pool, parts, keepAssistantIds),
    sizes: () => postgresSizes(pool, store),
    runCounts: () => postgresRunCounts(pool),
    close() {
      closing ??= pool.end(); // pool.end() throws when called twice
      return closing;
    },
  };
}

/** The URL with `synchronous_commit=off` for every connection of the pool (added to the URL's own `options`). */
function withAsyncCommits(url: string): string {
  const parsed = new URL(url);
  const options = parsed.searchParams.get("options");
  parsed.searchParams.set("options", `${options ? `${options} ` : ""}-c synchronous_commit=off`);
  return parsed.toString();
}
