import { useSession } from "../api/context";
import { usePolling } from "../hooks/usePolling";
import { CopyButton } from "../ui/CopyButton";
import { ErrorNote } from "../ui/ErrorNote";
import { Time } from "../ui/Time";
import { formatDuration } from "../ui/time";
import { FeedbackList } from "./FeedbackList";
import { formatCost, formatTokens, latencyOf, loadFeedback, runPath, type Span, type TracedRun } from "./trace-api";

/** JSON as indented text (React escapes it: a trace's content is never markup). */
function JsonBlock({ label, value }: { label: string; value: unknown }) {
  if (value === null || value === undefined) return null;
  return (
    <section className="span-json">
      <h3>{label}</h3>
      <pre data-testid={`span-${label.toLowerCase()}`}>{JSON.stringify(value, null, 2)}</pre>
    </section>
  );
}

/**
 * A span's details, fetched when it is opened: its inputs, outputs, error and
 * metadata (the spans page leaves them out), its token usage and cost, and
 * the feedback given on it.
 */
export function SpanPanel({ span, onClose }: { span: Span; onClose: () => void }) {
  const { api } = useSession();
  const { data, error } = usePolling(
    async () => {
      const [run, feedback] = await Promise.all([api.get<TracedRun>(runPath(span.id)), loadFeedback(api, span.id)]);
      return { run, feedback };
    },
    null,
    // Read again once a running span ends: its outputs come with its end.
    [api, span.id, span.end_time],
  );
  const run = data?.run;
  const latency = latencyOf(span);
  const costs = [
    ["Prompt", span.prompt_cost],
    ["Completion", span.completion_cost],
    ["Total", span.total_cost],
  ].filter((entry): entry is [string, number] => entry[1] !== null);
  const { metadata, ...extra } = run?.extra ?? {};
  return (
    <aside className="span-panel" aria-label={`Span ${span.name ?? span.id}`} data-testid="span-panel">
      <header>
        <h2>
          <span className={`span-kind kind-${span.run_type ?? "other"}`}>{span.run_type ?? "run"}</span> {span.name ?? span.id}
        </h2>
        <button type="button" onClick={onClose} aria-label="Close the span">
          ✕
        </button>
      </header>
      <dl className="facts span-facts">
        <dt>Status</dt>
        <dd>
          <span className={`trace-status ${span.status}`}>{span.status}</span>
        </dd>
        <dt>Started</dt>
        <dd>
          <Time iso={span.start_time} relative={false} />
        </dd>
        <dt>Latency</dt>
        <dd>{latency === null ? "still running" : formatDuration(latency)}</dd>
        <dt>Run id</dt>
        <dd>
          <code>{span.id}</code> <CopyButton value={span.id} label="Copy the run id" />
        </dd>
        {span.total_tokens !== null && (
          <>
            <dt>Tokens</dt>
            <dd data-testid="span-tokens">
              {formatTokens(span.prompt_tokens)} prompt · {formatTokens(span.completion_tokens)} completion ·{" "}
              {formatTokens(span.total_tokens)} total
            </dd>
          </>
        )}
        {costs.length > 0 && (
          <>
            <dt>Cost</dt>
            <dd>{costs.map(([label, cost]) => `${label} ${formatCost(cost)}`).join(" · ")}</dd>
          </>
        )}
        {run?.tags && run.tags.length > 0 && (
          <>
            <dt>Tags</dt>
            <dd>{run.tags.join(", ")}</dd>
          </>
        )}
      </dl>
      <ErrorNote error={error} />
      {!run && !error && <p aria-live="polite">Loading the span…</p>}
      {run?.error && (
        <section className="span-json">
          <h3>Error</h3>
          <pre className="span-error-text" data-testid="span-error">
            {run.error}
          </pre>
        </section>
      )}
      {run && (
        <>
          <JsonBlock label="Inputs" value={run.inputs} />
          <JsonBlock label="Outputs" value={run.outputs} />
          <JsonBlock label="Metadata" value={metadata} />
          {Object.keys(extra).length > 0 && <JsonBlock label="Extra" value={extra} />}
        </>
      )}
      {data && data.feedback.length > 0 && (
        <section>
          <h3>Feedback</h3>
          <FeedbackList feedback={data.feedback} />
        </section>
      )}
    </aside>
  );
}
