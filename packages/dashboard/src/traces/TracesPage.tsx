import { useCallback, useEffect, useState } from "react";
import { useSession } from "../api/context";
import { messageOf } from "../hooks/useAction";
import { usePolling } from "../hooks/usePolling";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";
import { Time } from "../ui/Time";
import { formatDuration } from "../ui/time";
import { formatTokens, isNotFound, latencyOf, loadDeployment, type Page, type RunStatus, type TracedRun } from "./trace-api";
import "./traces.css";

/** Traces per page: the list loads more on demand, so a project of thousands stays quick. */
const PAGE_SIZE = 50;

interface Filters {
  status: RunStatus | "";
  errorsOnly: boolean;
  /** Minimum latency in seconds, as typed. */
  minSeconds: string;
}

function queryOf(filters: Filters, offset: number): string {
  const query = new URLSearchParams({ root_only: "true", limit: String(PAGE_SIZE), offset: String(offset) });
  if (filters.status) query.set("status", filters.status);
  if (filters.errorsOnly) query.set("error", "true");
  const seconds = Number(filters.minSeconds);
  if (filters.minSeconds.trim() !== "" && Number.isFinite(seconds) && seconds > 0) {
    query.set("min_latency_ms", String(Math.round(seconds * 1000)));
  }
  return query.toString();
}

/** A deployment's traces (its tracing project's root runs), newest first, filtered, a page at a time. */
export function TracesPage({ id }: { id: string }) {
  const { api } = useSession();
  const deployment = usePolling(() => loadDeployment(api, id), null, [api, id]);
  const name = deployment.data?.name;
  const [filters, setFilters] = useState<Filters>({ status: "", errorsOnly: false, minSeconds: "" });
  const [runs, setRuns] = useState<TracedRun[]>();
  const [next, setNext] = useState<number | null>(null);
  const [noProject, setNoProject] = useState(false);
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(false);
  const [reload, setReload] = useState(0);

  const load = useCallback(
    async (offset: number) => {
      if (!name) return;
      setLoading(true);
      try {
        const page = await api.get<Page<TracedRun>>(
          `api/v1/projects/${encodeURIComponent(name)}/runs?${queryOf(filters, offset)}`,
        );
        setRuns((before) => (offset === 0 ? page.resources : [...(before ?? []), ...page.resources]));
        setNext(page.resources.length === PAGE_SIZE ? page.offset : null);
        setNoProject(false);
        setError(undefined);
      } catch (caught) {
        if (isNotFound(caught)) {
          setNoProject(true);
          setRuns([]);
        } else setError(messageOf(caught));
      } finally {
        setLoading(false);
      }
    },
    [api, name, filters],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: reload asks for the first page again
  useEffect(() => {
    void load(0);
  }, [load, reload]);

  const set = (change: Partial<Filters>) => setFilters((current) => ({ ...current, ...change }));
  const filtered = filters.status !== "" || filters.errorsOnly || filters.minSeconds.trim() !== "";

  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={hrefOf.list()}>Deployments</a> / <a href={hrefOf.deployment(id)}>{name ?? id}</a> / Traces
      </nav>
      <PageTitle title={`Traces of ${name ?? "the deployment"}`} />
      <ErrorNote error={deployment.error ?? error} />
      <form className="trace-filters" aria-label="Filter traces" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status{" "}
          <select value={filters.status} onChange={(event) => set({ status: event.target.value as Filters["status"] })}>
            <option value="">any</option>
            <option value="success">success</option>
            <option value="error">error</option>
            <option value="pending">pending</option>
          </select>
        </label>
        <label>
          Minimum latency (s){" "}
          <input
            type="number"
            min="0"
            step="0.1"
            inputMode="decimal"
            value={filters.minSeconds}
            onChange={(event) => set({ minSeconds: event.target.value })}
          />
        </label>
        <label>
          <input type="checkbox" checked={filters.errorsOnly} onChange={(event) => set({ errorsOnly: event.target.checked })} />{" "}
          Errors only
        </label>
        <button type="button" onClick={() => setReload((value) => value + 1)} disabled={loading}>
          Refresh
        </button>
      </form>
      {runs === undefined && !error && <p aria-live="polite">Loading traces…</p>}
      {runs !== undefined && runs.length === 0 && (
        <p data-testid="no-traces">
          {noProject || !filtered
            ? "No traces yet: each run of this deployment is traced here once it has run."
            : "No trace matches these filters."}
        </p>
      )}
      {runs !== undefined && runs.length > 0 && (
        <table className="trace-list" data-testid="trace-list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
              <th scope="col">Input</th>
              <th scope="col" className="number">
                Latency
              </th>
              <th scope="col" className="number">
                Tokens
              </th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <TraceRow key={run.id} deploymentId={id} run={run} />
            ))}
          </tbody>
        </table>
      )}
      {next !== null && (
        <button type="button" onClick={() => void load(next)} disabled={loading}>
          {loading ? "Loading…" : "Load more"}
        </button>
      )}
    </>
  );
}

/** A line of what the run was given: the last message's text for a chat graph, else the inputs as JSON. */
function previewOf(inputs: Record<string, unknown> | null): string {
  if (!inputs) return "";
  const messages = inputs.messages;
  const last: unknown = Array.isArray(messages) ? messages.at(-1) : undefined;
  if (last && typeof last === "object") {
    // A message as LangChain serialises it ({lc, kwargs: {content}}) or as the API takes it ({content}).
    const message = last as { content?: unknown; kwargs?: { content?: unknown } };
    const content = message.kwargs?.content ?? message.content;
    if (typeof content === "string") return content.slice(0, 200);
  }
  return JSON.stringify(inputs).slice(0, 200);
}

function TraceRow({ deploymentId, run }: { deploymentId: string; run: TracedRun }) {
  const latency = latencyOf(run);
  return (
    <tr data-testid="trace-row">
      <td>
        <a href={hrefOf.trace(deploymentId, run.id)}>{run.name ?? run.id}</a>
      </td>
      <td>
        <span className={`trace-status ${run.status}`}>{run.status}</span>
      </td>
      <td>
        <Time iso={run.start_time} />
      </td>
      <td className="trace-input">{previewOf(run.inputs)}</td>
      <td className="number">{latency === null ? "—" : formatDuration(latency)}</td>
      <td className="number">{formatTokens(run.total_tokens)}</td>
      <td className="trace-error" title={run.error ?? undefined}>
        {run.error?.split("\n")[0] ?? ""}
      </td>
    </tr>
  );
}
