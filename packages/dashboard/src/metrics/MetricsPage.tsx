import { lazy, Suspense, useState } from "react";
import { useSession } from "../api/context";
import type { Deployment } from "../api/types";
import { usePolling } from "../hooks/usePolling";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";
import type { DeploymentMetrics, MetricsWindow } from "../api/types";

// uPlot and the charts come with this page only.
const MetricsCharts = lazy(() => import("./MetricsCharts").then((module) => ({ default: module.MetricsCharts })));

const REFRESH_MS = 10_000;
const WINDOWS: { value: MetricsWindow; label: string; phrase: string }[] = [
  { value: "hour", label: "Last hour", phrase: "in the last hour" },
  { value: "day", label: "Last day", phrase: "in the last day" },
];

/**
 * A deployment's production view: runs per minute, latency percentiles, error rate, the queue and each replica's
 * CPU and memory over the last hour or day, as the control plane keeps them; read again every 10 seconds.
 */
export function MetricsPage({ id }: { id: string }) {
  const { api } = useSession();
  const [span, setSpan] = useState<MetricsWindow>("hour");
  const { data: deployment } = usePolling(() => api.get<Deployment>(`v2/deployments/${id}`), null, [api, id]);
  const { data: metrics, error } = usePolling(
    () => api.get<DeploymentMetrics>(`v2/deployments/${id}/metrics?window=${span}`),
    REFRESH_MS,
    [api, id, span],
  );
  // The answer of the window shown: a switch shows "Loading" rather than the other window's charts.
  const shown = metrics?.window === span ? metrics : undefined;
  const phrase = WINDOWS.find((one) => one.value === span)!.phrase;
  const name = deployment?.name ?? "the deployment";

  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={hrefOf.list()}>Deployments</a> / <a href={hrefOf.deployment(id)}>{deployment?.name ?? id}</a> / Metrics
      </nav>
      <PageTitle title={`Metrics of ${name}`} />
      <div className="metrics-bar">
        <fieldset className="toggle">
          <legend className="visually-hidden">Window</legend>
          {WINDOWS.map((option) => (
            <button key={option.value} type="button" aria-pressed={span === option.value} onClick={() => setSpan(option.value)}>
              {option.label}
            </button>
          ))}
        </fieldset>
        <span className="hint">Refreshed every {REFRESH_MS / 1000} seconds</span>
      </div>
      <ErrorNote error={error} />
      {!shown && !error && <p aria-live="polite">Loading…</p>}
      {shown && (
        <Suspense fallback={<p aria-live="polite">Loading…</p>}>
          <MetricsCharts metrics={shown} phrase={phrase} />
        </Suspense>
      )}
    </>
  );
}
