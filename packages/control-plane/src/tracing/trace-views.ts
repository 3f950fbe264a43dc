import type { FeedbackRecord, JsonObject, RunStatus, TraceSpanRecord, TracedRunRecord } from "../storage/tracing-types.js";

const statusOf = (run: { error: string | null; end_time: string | null }): RunStatus =>
  run.error !== null ? "error" : run.end_time !== null ? "success" : "pending";

/** A run as the read API answers it: `session_id` is LangSmith's name for its project id. */
export function presentRun(run: TracedRunRecord) {
  return {
    id: run.id,
    trace_id: run.trace_id,
    parent_run_id: run.parent_run_id,
    dotted_order: run.dotted_order,
    project_id: run.project_id,
    session_id: run.project_id,
    name: run.name,
    run_type: run.run_type,
    status: statusOf(run),
    start_time: run.start_time,
    end_time: run.end_time,
    inputs: run.inputs,
    outputs: run.outputs,
    error: run.error,
    extra: run.extra,
    tags: run.tags,
    events: run.events,
    reference_example_id: run.reference_example_id,
    prompt_tokens: run.prompt_tokens,
    completion_tokens: run.completion_tokens,
    total_tokens: run.total_tokens,
    thread_id: run.thread_id,
    created_at: run.created_at,
    updated_at: run.updated_at,
  };
}

export type PresentedRun = ReturnType<typeof presentRun>;
export type RunTree = PresentedRun & { child_runs: RunTree[] };

/** `root` and its descendants among `runs` (a trace's runs in dotted order), children nested in that order. */
export function buildTree(root: TracedRunRecord, runs: TracedRunRecord[]): RunTree {
  const children = new Map<string, TracedRunRecord[]>();
  for (const run of runs) {
    if (run.parent_run_id === null || run.id === root.id) continue;
    const siblings = children.get(run.parent_run_id) ?? [];
    siblings.push(run);
    children.set(run.parent_run_id, siblings);
  }
  const seen = new Set<string>();
  // Iterative, and guarded against a cycle a client could send in parent_run_id.
  const node = (run: TracedRunRecord): RunTree => ({ ...presentRun(run), child_runs: [] });
  const top = node(root);
  seen.add(root.id);
  const stack: RunTree[] = [top];
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const child of children.get(current.id) ?? []) {
      if (seen.has(child.id)) continue;
      seen.add(child.id);
      const built = node(child);
      current.child_runs.push(built);
      stack.push(built);
    }
  }
  return top;
}

export function presentFeedback(feedback: FeedbackRecord) {
  return {
    id: feedback.id,
    run_id: feedback.run_id,
    trace_id: feedback.trace_id,
    key: feedback.key,
    score: feedback.score,
    value: feedback.value,
    comment: feedback.comment,
    correction: feedback.correction,
    metadata: feedback.metadata,
    source: feedback.source,
    // LangSmith's shape of the same two fields, for its readers.
    feedback_source: { type: feedback.source, metadata: feedback.metadata },
    created_at: feedback.created_at,
  };
}

const numberAt = (object: unknown, key: string): number | null => {
  const value = object && typeof object === "object" ? (object as JsonObject)[key] : undefined;
  return typeof value === "number" && Number.isFinite(value) ? value : null;
};

/**
 * Costs a trace may carry (Berth computes none): `total_cost`, `prompt_cost`,
 * `completion_cost` in `extra.metadata`, else LangSmith's names in
 * `extra.metadata.usage_metadata` (`total_cost`, `input_cost`, `output_cost`).
 */
export function costsOf(extra: JsonObject | null) {
  const metadata = extra?.metadata;
  const usage = metadata && typeof metadata === "object" ? (metadata as JsonObject).usage_metadata : undefined;
  return {
    prompt_cost: numberAt(metadata, "prompt_cost") ?? numberAt(usage, "input_cost"),
    completion_cost: numberAt(metadata, "completion_cost") ?? numberAt(usage, "output_cost"),
    total_cost: numberAt(metadata, "total_cost") ?? numberAt(usage, "total_cost"),
  };
}

/** Segments of a dotted order (one per ancestor and the run itself). */
export const dottedDepth = (dottedOrder: string | null) => (dottedOrder ? dottedOrder.split(".").length : null);

/** A span of the spans page: `depth` counts from `rootDepth` (the dotted depth of the run asked for). */
export function presentSpan(span: TraceSpanRecord, rootDepth: number | null) {
  const depth = dottedDepth(span.dotted_order);
  return {
    id: span.id,
    parent_run_id: span.parent_run_id,
    dotted_order: span.dotted_order,
    // Without dotted orders only "the run or below it" is known.
    depth: depth !== null && rootDepth !== null ? Math.max(0, depth - rootDepth) : span.parent_run_id === null ? 0 : 1,
    name: span.name,
    run_type: span.run_type,
    status: statusOf(span),
    start_time: span.start_time,
    end_time: span.end_time,
    error: span.error,
    prompt_tokens: span.prompt_tokens,
    completion_tokens: span.completion_tokens,
    total_tokens: span.total_tokens,
    ...costsOf(span.extra),
  };
}
