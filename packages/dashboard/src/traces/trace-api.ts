// The control plane's tracing read API as the traces pages use it (docs/tracing.md, "Read API").
import type { ApiClient } from "../api/client";
import { ApiError } from "../api/client";
import type { Deployment } from "../api/types";

export type RunStatus = "success" | "error" | "pending";

/** A run as GET /api/v1/runs/{id} and the project's run list answer it. */
export interface TracedRun {
  id: string;
  trace_id: string;
  parent_run_id: string | null;
  name: string | null;
  run_type: string | null;
  status: RunStatus;
  start_time: string | null;
  end_time: string | null;
  inputs: Record<string, unknown> | null;
  outputs: Record<string, unknown> | null;
  error: string | null;
  extra: { metadata?: Record<string, unknown> } | null;
  tags: string[] | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  thread_id: string | null;
}

/** A span of GET /api/v1/runs/{id}/spans: a run without its inputs and outputs. */
export interface Span {
  id: string;
  parent_run_id: string | null;
  depth: number;
  name: string | null;
  run_type: string | null;
  status: RunStatus;
  start_time: string | null;
  end_time: string | null;
  error: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
}

export interface Feedback {
  id: string;
  key: string;
  score: number | null;
  value: unknown;
  comment: string | null;
  source: string;
  created_at: string;
}

export interface Page<T> {
  resources: T[];
  offset: number;
}

export interface SpanPage extends Page<Span> {
  total: number;
}

/** How long a run took, in ms; null while it runs. */
export function latencyOf(run: { start_time: string | null; end_time: string | null }): number | null {
  if (!run.start_time || !run.end_time) return null;
  return Math.max(0, Date.parse(run.end_time) - Date.parse(run.start_time));
}

/** The deployment's name: its tracing project is named like it. */
export const loadDeployment = (api: ApiClient, id: string) => api.get<Deployment>(`v2/deployments/${encodeURIComponent(id)}`);

export const runPath = (runId: string, rest = "") => `api/v1/runs/${encodeURIComponent(runId)}${rest}`;

export const loadFeedback = async (api: ApiClient, runId: string) =>
  (await api.get<Page<Feedback>>(runPath(runId, "/feedback?limit=100"))).resources;

/** A run, or undefined when the tracing service has none of that id (yet: traces arrive asynchronously). */
export async function loadRun(api: ApiClient, runId: string): Promise<TracedRun | undefined> {
  try {
    return await api.get<TracedRun>(runPath(runId));
  } catch (caught) {
    if (caught instanceof ApiError && caught.status === 404) return undefined;
    throw caught;
  }
}

export const isNotFound = (caught: unknown) => caught instanceof ApiError && caught.status === 404;

/** A number of tokens, or a dash. */
export const formatTokens = (tokens: number | null | undefined) => (tokens == null ? "—" : tokens.toLocaleString());

/** A cost in dollars, to the precision small model calls need. */
export const formatCost = (cost: number) => `$${cost < 0.01 ? cost.toPrecision(2) : cost.toFixed(4)}`;
