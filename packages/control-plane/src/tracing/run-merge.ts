/**
 * Merging a run's post and patches, which arrive in any order (batches are
 * sent concurrently; a patch may even come first) and sometimes together.
 * A patch describes the run later than its post, so: a patch's fields win
 * over what is stored, a post only fills what is still empty: a post and its
 * patch make the same run whichever arrives first.
 */
import { threadIdOf, tokenUsage } from "./token-usage.js";
import type { JsonObject, TracedRunRecord } from "../storage/tracing-types.js";

/** The run fields an operation may set (null or absent: not set by it). */
export interface RunFields {
  name?: string | null;
  run_type?: string | null;
  start_time?: string | null;
  end_time?: string | null;
  inputs?: JsonObject | null;
  outputs?: JsonObject | null;
  error?: string | null;
  extra?: JsonObject | null;
  tags?: string[] | null;
  events?: unknown[] | null;
  parent_run_id?: string | null;
  dotted_order?: string | null;
  reference_example_id?: string | null;
}

/** One post or patch of a run, its project resolved. */
export interface RunOp {
  kind: "post" | "patch";
  id: string;
  project_id: string;
  trace_id: string;
  fields: RunFields;
}

const MERGED = [
  "name",
  "run_type",
  "start_time",
  "end_time",
  "inputs",
  "outputs",
  "error",
  "tags",
  "events",
  "parent_run_id",
  "dotted_order",
  "reference_example_id",
] as const satisfies readonly (keyof RunFields & keyof TracedRunRecord)[];

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** `extra` of both, the winner's keys on top; `metadata` merged key by key the same way (thread_id set at post survives a patch). */
function mergeExtra(stored: JsonObject | null, incoming: JsonObject | null, incomingWins: boolean): JsonObject | null {
  if (!incoming) return stored;
  if (!stored) return incoming;
  const [low, high] = incomingWins ? [stored, incoming] : [incoming, stored];
  const merged: JsonObject = { ...low, ...high };
  if (isObject(low.metadata) || isObject(high.metadata)) {
    merged.metadata = { ...(isObject(low.metadata) ? low.metadata : {}), ...(isObject(high.metadata) ? high.metadata : {}) };
  }
  return merged;
}

function emptyRun(tenantId: string, op: RunOp, now: string): TracedRunRecord {
  return {
    tenant_id: tenantId,
    id: op.id,
    project_id: op.project_id,
    trace_id: op.trace_id,
    parent_run_id: null,
    dotted_order: null,
    name: null,
    run_type: null,
    start_time: null,
    end_time: null,
    inputs: null,
    outputs: null,
    error: null,
    extra: null,
    tags: null,
    events: null,
    reference_example_id: null,
    prompt_tokens: null,
    completion_tokens: null,
    total_tokens: null,
    thread_id: null,
    created_at: now,
    updated_at: now,
  };
}

/** The run after `op`. Project and trace are those of the first operation stored. */
export function applyRunOp(tenantId: string, stored: TracedRunRecord | undefined, op: RunOp, now: string): TracedRunRecord {
  const base = stored ?? emptyRun(tenantId, op, now);
  const next: TracedRunRecord = { ...base, updated_at: now };
  const writable = next as unknown as Record<string, unknown>;
  for (const field of MERGED) {
    const incoming = op.fields[field];
    if (incoming === undefined || incoming === null) continue;
    if (op.kind === "patch" || base[field] === null) writable[field] = incoming;
  }
  next.extra = mergeExtra(base.extra, op.fields.extra ?? null, op.kind === "patch");
  const usage = tokenUsage(next.outputs, next.extra);
  next.prompt_tokens = usage?.prompt_tokens ?? null;
  next.completion_tokens = usage?.completion_tokens ?? null;
  next.total_tokens = usage?.total_tokens ?? null;
  next.thread_id = threadIdOf(next.extra);
  return next;
}
