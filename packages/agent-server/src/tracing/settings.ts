/**
 * Tracing is configured with the standard LangChain variables, so whatever
 * sets them for any LangChain program (the control plane for its deployments,
 * a developer's shell for `berth dev`) configures Berth too. They are read
 * in config/settings.ts.
 */
export interface TracingSettings {
  /** Base URL of the LangSmith-compatible API (`LANGSMITH_ENDPOINT`), without a trailing slash. */
  endpoint: string;
  /** `LANGSMITH_API_KEY`, sent as `x-api-key`. */
  apiKey?: string;
  /** The project every run is traced into (`LANGSMITH_PROJECT`). */
  project: string;
  /** How long a feedback URL stays valid (`BERTH_FEEDBACK_URL_TTL_SECONDS`). */
  feedbackUrlTtlMs: number;
  /** `LANGSMITH_WORKSPACE_ID`, sent as `x-tenant-id` (for keys that reach several workspaces). */
  workspaceId?: string;
  /** `LANGSMITH_TRACING_SAMPLING_RATE`: the share of runs traced, 0 to 1 (default 1). */
  samplingRate: number;
}
