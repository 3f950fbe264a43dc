import { useEffect, useMemo, useState } from "react";
import type { ApiClient } from "../api/client";
import { useSession } from "../api/context";
import { messageOf } from "../hooks/useAction";
import { usePolling } from "../hooks/usePolling";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";
import { Time } from "../ui/Time";
import { formatDuration } from "../ui/time";
import { FeedbackList } from "./FeedbackList";
import { SpanPanel } from "./SpanPanel";
import {
  type Feedback,
  formatCost,
  formatTokens,
  latencyOf,
  loadDeployment,
  loadFeedback,
  loadRun,
  runPath,
  type Span,
  type SpanPage,
  type TracedRun,
} from "./trace-api";
import { Waterfall } from "./Waterfall";
import "./traces.css";

/** Spans per request: a trace of 10,000 spans arrives in a few pages, the first shown at once. */
const SPAN_PAGE = 2000;
/** Tracing is asynchronous (the agent server sends its trace in batches): a run just made may not be there yet. */
const WAIT_FOR_TRACE_MS = 10_000;
const RETRY_MS = 1000;
/** A trace still running is read again this often, while it has at most LIVE_SPANS spans. */
const LIVE_MS = 2000;
const LIVE_SPANS = 2000;

interface TraceState {
  root?: TracedRun;
  spans: Span[];
  /** Spans of the trace in all (known after the first page). */
  total?: number;
  feedback: Feedback[];
  /** The run never appeared while we waited. */
  missing: boolean;
  error?: string;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Every span of the run's trace, page by page; `onPage` sees each page as it arrives. */
async function loadSpans(api: ApiClient, runId: string, signal: AbortSignal, onPage?: (spans: Span[], total: number) => void) {
  const spans: Span[] = [];
  let total = 0;
  for (let offset = 0; !signal.aborted; ) {
    const page = await api.get<SpanPage>(runPath(runId, `/spans?limit=${SPAN_PAGE}&offset=${offset}`));
    spans.push(...page.resources);
    total = page.total;
    if (!signal.aborted) onPage?.([...spans], total);
    if (page.resources.length < SPAN_PAGE) break;
    offset = page.offset;
  }
  return { spans, total };
}

/**
 * The root run (waited for a while), its feedback, then its spans page by
 * page. While the run is still running, and its trace small, it is read again
 * every few seconds so the waterfall fills in.
 */
async function loadTrace(api: ApiClient, runId: string, signal: AbortSignal, update: (change: Partial<TraceState>) => void) {
  const deadline = Date.now() + WAIT_FOR_TRACE_MS;
  let root = await loadRun(api, runId);
  while (!root && Date.now() < deadline && !signal.aborted) {
    await sleep(RETRY_MS, signal);
    if (!signal.aborted) root = await loadRun(api, runId);
  }
  if (signal.aborted) return;
  if (!root) return update({ missing: true });
  update({ root, missing: false });
  void loadFeedback(api, runId).then((feedback) => signal.aborted || update({ feedback }));
  let { total } = await loadSpans(api, runId, signal, (spans, all) => update({ spans, total: all }));
  while (root?.status === "pending" && total <= LIVE_SPANS && !signal.aborted) {
    await sleep(LIVE_MS, signal);
    if (signal.aborted) return;
    root = (await loadRun(api, runId)) ?? root;
    const fresh = await loadSpans(api, runId, signal);
    total = fresh.total;
    if (!signal.aborted) update({ root, spans: fresh.spans, total });
  }
}

function useTrace(runId: string, attempt: number): TraceState {
  const { api } = useSession();
  const [state, setState] = useState<TraceState>({ spans: [], feedback: [], missing: false });
  // biome-ignore lint/correctness/useExhaustiveDependencies: attempt asks for the trace again
  useEffect(() => {
    const abort = new AbortController();
    setState({ spans: [], feedback: [], missing: false });
    const update = (change: Partial<TraceState>) => setState((current) => ({ ...current, ...change }));
    loadTrace(api, runId, abort.signal, update).catch((caught) => abort.signal.aborted || update({ error: messageOf(caught) }));
    return () => abort.abort();
  }, [api, runId, attempt]);
  return state;
}

/** The thread a root run belongs to: LangGraph puts it in the run's metadata. */
function threadOf(root: TracedRun): string | undefined {
  const metadata = root.extra?.metadata;
  const fromMetadata = typeof metadata === "object" && metadata !== null ? Reflect.get(metadata, "thread_id") : undefined;
  return root.thread_id ?? (typeof fromMetadata === "string" ? fromMetadata : undefined);
}

/** A run's trace: a header with its totals and feedback, the waterfall of its spans, and the span opened. */
export function TracePage({ id, runId }: { id: string; runId: string }) {
  const { api } = useSession();
  const deployment = usePolling(() => loadDeployment(api, id), null, [api, id]);
  const [attempt, setAttempt] = useState(0);
  const trace = useTrace(runId, attempt);
  const [selectedId, setSelectedId] = useState<string>();
  const { root, spans } = trace;
  // By id: a trace read again brings new span objects (a span that ended since, with its end time).
  const selected = useMemo(() => spans.find((span) => span.id === selectedId), [spans, selectedId]);

  const totals = useMemo(() => {
    // A root reporting no usage of its own (a LangGraph graph's): its LLM calls' tokens, as LangSmith sums them.
    let tokens = 0;
    let cost = 0;
    let counted = false;
    let costed = false;
    for (const span of spans) {
      if (span.run_type === "llm" && span.total_tokens !== null) {
        tokens += span.total_tokens;
        counted = true;
      }
      if (span.run_type === "llm" && span.total_cost !== null) {
        cost += span.total_cost;
        costed = true;
      }
    }
    const own = spans[0]?.id === runId ? spans[0] : undefined;
    return {
      tokens: root?.total_tokens ?? (counted ? tokens : null),
      cost: own?.total_cost ?? (costed ? cost : null),
    };
  }, [spans, root, runId]);

  const name = deployment.data?.name;
  const latency = root ? latencyOf(root) : null;
  const threadId = root ? threadOf(root) : undefined;
  const loading = root !== undefined && (trace.total === undefined || spans.length < trace.total);

  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={hrefOf.list()}>Deployments</a> / <a href={hrefOf.deployment(id)}>{name ?? id}</a> /{" "}
        <a href={hrefOf.traces(id)}>Traces</a> / {root?.name ?? runId}
      </nav>
      <PageTitle title={`Trace of ${root?.name ?? "a run"}`} />
      <ErrorNote error={deployment.error ?? trace.error} />
      {!root && !trace.missing && !trace.error && <p aria-live="polite">Looking for the trace of run {runId}…</p>}
      {trace.missing && (
        <div role="status" data-testid="trace-missing">
          <p>
            No trace for this run (yet). Traces arrive a few seconds after a run; a run that has not started, or a deployment
            without tracing, has none.
          </p>
          <button type="button" onClick={() => setAttempt((value) => value + 1)}>
            Try again
          </button>{" "}
          <a href={hrefOf.traces(id)}>All traces</a>
        </div>
      )}
      {root && (
        <>
          <section className="trace-header" aria-label="Trace summary" data-testid="trace-header">
            <dl className="trace-totals">
              <div>
                <dt>Status</dt>
                <dd>
                  <span className={`trace-status ${root.status}`}>{root.status}</span>
                </dd>
              </div>
              <div>
                <dt>Started</dt>
                <dd>
                  <Time iso={root.start_time} />
                </dd>
              </div>
              <div>
                <dt>Latency</dt>
                <dd data-testid="trace-latency">{latency === null ? "still running" : formatDuration(latency)}</dd>
              </div>
              <div>
                <dt>Tokens</dt>
                <dd data-testid="trace-tokens">{formatTokens(totals.tokens)}</dd>
              </div>
              {totals.cost !== null && (
                <div>
                  <dt>Cost</dt>
                  <dd>{formatCost(totals.cost)}</dd>
                </div>
              )}
              <div>
                <dt>Spans</dt>
                <dd data-testid="trace-span-count">
                  {trace.total === undefined
                    ? "…"
                    : loading
                      ? `${spans.length.toLocaleString()} of ${trace.total.toLocaleString()}`
                      : trace.total.toLocaleString()}
                </dd>
              </div>
            </dl>
            <p className="trace-links">
              <a href={hrefOf.traces(id)}>← All traces</a>
              {threadId && (
                <>
                  {" · "}
                  <a href={hrefOf.studio(id, { threadId })}>Open the thread in the Studio</a>
                </>
              )}
              {" · "}
              <button type="button" onClick={() => setAttempt((value) => value + 1)}>
                Reload
              </button>
            </p>
            {root.error && (
              <pre className="span-error-text trace-root-error" data-testid="trace-error">
                {root.error}
              </pre>
            )}
            {trace.feedback.length > 0 && (
              <section aria-label="Feedback" data-testid="trace-feedback">
                <h2>Feedback</h2>
                <FeedbackList feedback={trace.feedback} />
              </section>
            )}
          </section>
          <div className={`trace-body${selected ? " with-panel" : ""}`}>
            {spans.length > 0 ? (
              <Waterfall spans={spans} selected={selectedId} onSelect={(span) => setSelectedId(span.id)} />
            ) : (
              <p aria-live="polite">Loading spans…</p>
            )}
            {selected && <SpanPanel key={selected.id} span={selected} onClose={() => setSelectedId(undefined)} />}
          </div>
        </>
      )}
    </>
  );
}
