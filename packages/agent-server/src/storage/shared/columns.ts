// The columns both backends select, listed once so they select the same.
// Where a row becomes an API object as it is (assistants, PostgreSQL's
// threads), the order is the API's key order.

const list = (...columns: string[]) => columns.join(", ");

export const ASSISTANT_COLUMNS = list(
  "assistant_id",
  "graph_id",
  "name",
  "description",
  "config",
  "context",
  "metadata",
  "version",
  "created_at",
  "updated_at",
);

export const ASSISTANT_VERSION_COLUMNS = list(
  "assistant_id",
  "version",
  "graph_id",
  "name",
  "description",
  "config",
  "context",
  "metadata",
  "created_at",
);

export const THREAD_COLUMNS = list(
  "thread_id",
  "created_at",
  "updated_at",
  "metadata",
  "status",
  "config",
  `"values"`,
  "interrupts",
);

/** The columns a QueuedRun is made of (RunColumns). */
export const RUN_COLUMNS = list(
  "run_id",
  "thread_id",
  "assistant_id",
  "status",
  "metadata",
  "kwargs",
  "multitask_strategy",
  "created_at",
  "updated_at",
  "available_at",
  "attempt",
  "handovers",
  "cancel_action",
  "output",
);

/** A checkpoint row but its metadata, which each backend reads back as JSON text its own way. */
export const CHECKPOINT_COLUMNS = list(
  "thread_id",
  "checkpoint_ns",
  "checkpoint_id",
  "parent_checkpoint_id",
  "type",
  "checkpoint",
);

export const CHECKPOINT_WRITE_COLUMNS = list(
  "thread_id",
  "checkpoint_ns",
  "checkpoint_id",
  "task_id",
  "task_path",
  "idx",
  "channel",
  "type",
  "value",
);

export const CHECKPOINT_BLOB_COLUMNS = list("thread_id", "checkpoint_ns", "channel", "version", "type", "blob");

/** The columns as those of the table aliased `alias` (`a.x, a.y`), for statements that join or return from several. */
export function qualified(alias: string, columns: string): string {
  return columns
    .split(", ")
    .map((column) => `${alias}.${column}`)
    .join(", ");
}

/** A store item (StoreItemRecord) as stored: its namespace is the joined text. */
export const STORE_ITEM_COLUMNS = list("namespace", "key", "value", "created_at", "updated_at", "expires_at", "ttl_minutes");

/** A cron, in the API's key order. */
export const CRON_COLUMNS = list(
  "cron_id",
  "assistant_id",
  "thread_id",
  "on_run_completed",
  "end_time",
  "schedule",
  "timezone",
  "created_at",
  "updated_at",
  "payload",
  "user_id",
  "next_run_date",
  "metadata",
  "enabled",
);

/** The webhook outbox's columns users read (the payload and give-up time are the deliverer's). */
export const WEBHOOK_OUTBOX_COLUMNS = list(
  "run_id",
  "thread_id",
  "url",
  "status",
  "attempts",
  "last_status",
  "last_error",
  "next_attempt_at",
  "created_at",
  "updated_at",
  "delivered_at",
);
