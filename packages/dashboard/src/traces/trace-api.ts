// The control plane's tracing read API as the traces pages use it (docs/tracing.md, "Read API").
import type { ApiClient } from "../api/client";
import { ApiError } from "../api/client";
import type { Deployment, Feedback, Page, TracedRun } from "../api/types";

export type { Feedback, Page, Span, SpanPage, TracedRun } from "../api/types";

export type RunStatus = TracedRun["status"];

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
