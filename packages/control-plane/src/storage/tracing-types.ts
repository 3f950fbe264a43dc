/**
 * Records and storage interface of the tracing service (LangSmith-compatible
 * traces and feedback): sqlite/tracing.ts and postgres/tracing.ts. Projects
 * are the control plane's `tracing_projects` rows, one per deployment.
 */

export type JsonObject = Record<string, unknown>;

export interface TracingProjectRecord {
  id: string;
  tenant_id: string;
  name: string;
  deployment_id: string | null;
  created_at: string;
}

/** One traced run: a post and its patches merged (see run-merge.ts). */
export interface TracedRunRecord {
  tenant_id: string;
  id: string;
  project_id: string;
  trace_id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  name: string | null;
  run_type: string | null;
  start_time: string | null;
  end_time: string | null;
  inputs: JsonObject | null;
  outputs: JsonObject | null;
  error: string | null;
  /** Everything the client sent in `extra`, `metadata` included. */
  extra: JsonObject | null;
  tags: string[] | null;
  events: unknown[] | null;
  reference_example_id: string | null;
  /** Token usage the run itself reports (see token-usage.ts); null when it reports none. */
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  /** `extra.metadata.thread_id` (or `session_id`, `conversation_id`), kept apart to filter on. */
  thread_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface FeedbackRecord {
  tenant_id: string;
  id: string;
  run_id: string;
  trace_id: string | null;
  key: string;
  score: number | null;
  value: unknown;
  comment: string | null;
  correction: unknown;
  metadata: JsonObject | null;
  /** Who gave it: `token` (a pre-signed URL), `api`, `model`, `app`… (the client's feedback_source.type). */
  source: string;
  created_at: string;
}

/** A pre-signed feedback URL's token: only its SHA-256 is stored, as for API keys. */
export interface FeedbackTokenRecord {
  token_hash: string;
  tenant_id: string;
  run_id: string;
  key: string;
  /** The client's `feedback_config` (continuous bounds or categories), checked against submitted scores. */
  feedback_config: JsonObject | null;
  expires_at: string;
  created_at: string;
}

export interface RunFilter {
  project_id: string;
  thread_id?: string;
  trace_id?: string;
  root_only: boolean;
  /** Any of these statuses: `error` when it has an error, `success` when ended, else `pending` (as presented). */
  statuses?: RunStatus[];
  /** Exact run name. */
  name?: string;
  /** Latency bounds (end_time − start_time, ms); a run not ended has none and is left out. */
  min_latency_ms?: number;
  max_latency_ms?: number;
  order: "asc" | "desc";
  limit: number;
  offset: number;
}

export type RunStatus = "success" | "error" | "pending";

/**
 * A run without its large fields (inputs, outputs, events), for reading a
 * whole trace page by page. `error` is cut to SPAN_ERROR_CHARS characters;
 * `extra` is only read for the costs it may carry (see trace-views.ts).
 */
export type TraceSpanRecord = Pick<
  TracedRunRecord,
  | "id"
  | "parent_run_id"
  | "dotted_order"
  | "name"
  | "run_type"
  | "start_time"
  | "end_time"
  | "error"
  | "extra"
  | "prompt_tokens"
  | "completion_tokens"
  | "total_tokens"
>;

/** The spans of a page: the runs of one project and trace under `root_dotted_order` (the whole trace when null). */
export interface SpanFilter {
  project_id: string;
  trace_id: string;
  /** The subtree's root: spans are it and the runs whose dotted order extends it. */
  root_dotted_order: string | null;
  limit: number;
  offset: number;
}

export interface ThreadUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** LLM runs whose tokens were counted. */
  runs: number;
  /** Root runs of the thread (one per graph invocation). */
  traces: number;
}

export interface TracingStore {
  projectById(tenantId: string, id: string): Promise<TracingProjectRecord | undefined>;
  projectByName(tenantId: string, name: string): Promise<TracingProjectRecord | undefined>;
  /** The workspace's project of that name, created (no deployment) when missing; concurrent calls agree. */
  ensureProject(project: TracingProjectRecord): Promise<TracingProjectRecord>;
  /**
   * Merges run operations atomically: `merge` gets the stored runs among `ids`
   * (locked until the change is written) and returns the runs to store.
   * Concurrent calls touching the same run take turns.
   */
  upsertRuns(tenantId: string, ids: string[], merge: (current: Map<string, TracedRunRecord>) => TracedRunRecord[]): Promise<void>;
  getRun(tenantId: string, id: string): Promise<TracedRunRecord | undefined>;
  /** Every run of a trace, in dotted order. */
  traceRuns(tenantId: string, traceId: string): Promise<TracedRunRecord[]>;
  listRuns(tenantId: string, filter: RunFilter): Promise<TracedRunRecord[]>;
  /** A page of a trace's spans in dotted order, and how many there are in all. */
  traceSpans(tenantId: string, filter: SpanFilter): Promise<{ spans: TraceSpanRecord[]; total: number }>;
  threadUsage(tenantId: string, projectId: string, threadId: string): Promise<ThreadUsage>;
  /** Inserts feedback; an id already stored for the workspace is left as it is (client retries). */
  addFeedback(records: FeedbackRecord[]): Promise<void>;
  listFeedback(tenantId: string, runId: string, limit: number, offset: number): Promise<FeedbackRecord[]>;
  createToken(token: FeedbackTokenRecord): Promise<void>;
  getToken(tokenHash: string): Promise<FeedbackTokenRecord | undefined>;
}
