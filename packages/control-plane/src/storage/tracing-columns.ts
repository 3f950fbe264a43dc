/** Column lists and SQL shared by both backends, in the key order of the records of ../types.ts. */

export const RUN_COLUMNS = [
  "tenant_id",
  "id",
  "project_id",
  "trace_id",
  "parent_run_id",
  "dotted_order",
  "name",
  "run_type",
  "start_time",
  "end_time",
  "inputs",
  "outputs",
  "error",
  "extra",
  "tags",
  "events",
  "reference_example_id",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "thread_id",
  "created_at",
  "updated_at",
] as const;

export const FEEDBACK_COLUMNS = [
  "tenant_id",
  "id",
  "run_id",
  "trace_id",
  "key",
  "score",
  "value",
  "comment",
  "correction",
  "metadata",
  "source",
  "created_at",
] as const;

export const TOKEN_COLUMNS = ["token_hash", "tenant_id", "run_id", "key", "feedback_config", "expires_at", "created_at"] as const;

/** The lists above as SQL, for SELECT and INSERT. */
export const RUN = RUN_COLUMNS.join(", ");
export const FEEDBACK = FEEDBACK_COLUMNS.join(", ");
export const TOKEN = TOKEN_COLUMNS.join(", ");

/**
 * A thread's token totals. Only `llm` runs count: LangSmith tracks tokens on
 * LLM runs, and a chain that reports its children's usage too would count
 * them twice. CAST: PostgreSQL sums bigints as numeric, which pg reads as text.
 */
export const USAGE_SELECT = `
  CAST(COALESCE(SUM(CASE WHEN run_type = 'llm' THEN prompt_tokens END), 0) AS BIGINT) AS prompt_tokens,
  CAST(COALESCE(SUM(CASE WHEN run_type = 'llm' THEN completion_tokens END), 0) AS BIGINT) AS completion_tokens,
  CAST(COALESCE(SUM(CASE WHEN run_type = 'llm' THEN total_tokens END), 0) AS BIGINT) AS total_tokens,
  COUNT(CASE WHEN run_type = 'llm' AND total_tokens IS NOT NULL THEN 1 END) AS runs,
  COUNT(CASE WHEN parent_run_id IS NULL THEN 1 END) AS traces`;

/** How much of a span's error the spans page carries (the whole run has it all). */
export const SPAN_ERROR_CHARS = 500;

/** The columns of a span (TraceSpanRecord), the error cut short. */
export const SPAN = `id, parent_run_id, dotted_order, name, run_type, start_time, end_time,
  substr(error, 1, ${SPAN_ERROR_CHARS}) AS error, extra, prompt_tokens, completion_tokens, total_tokens`;

/** A run's status as presented (trace-views.ts), as SQL. */
export const STATUS_SQL = {
  error: "error IS NOT NULL",
  success: "error IS NULL AND end_time IS NOT NULL",
  pending: "error IS NULL AND end_time IS NULL",
} as const;
