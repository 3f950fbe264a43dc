import { useMemo } from "react";
import { type Series, TimeSeriesChart } from "./TimeSeriesChart";
import type { DeploymentMetrics } from "../api/types";

type Values = (number | null)[];

const scaled = (values: Values, factor: number): Values => values.map((value) => (value === null ? null : value * factor));
const hasData = (values: Values) => values.some((value) => value !== null);

const count = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 2 : 1));
const ms = (value: number) =>
  value >= 1000 ? `${(value / 1000).toFixed(value >= 10_000 ? 0 : 1)} s` : `${Math.round(value)} ms`;
const percent = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} %`;
const mib = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} MiB`;

/** How many runs the window saw: each point is a rate per minute over `step_seconds`. */
function totalRuns(metrics: DeploymentMetrics): number {
  const perMinute = metrics.runs_per_minute.reduce<number>((sum, value) => sum + (value ?? 0), 0);
  return Math.round((perMinute * metrics.step_seconds) / 60);
}

interface ChartSpec {
  testId: string;
  title: string;
  unit: string;
  series: Series[];
  format: (value: number) => string;
  minTop: number;
}

/** The charts of a metrics answer, in the page's order; the replicas' two only when some replica reported. */
function chartsOf(metrics: DeploymentMetrics): ChartSpec[] {
  const replicas = (pick: (replica: DeploymentMetrics["replicas"][number]) => Values, factor = 1): Series[] =>
    metrics.replicas.map((replica) => ({ label: replica.name, values: scaled(pick(replica), factor) }));
  const charts: ChartSpec[] = [
    {
      testId: "chart-runs",
      title: "Runs per minute",
      unit: "runs / min",
      format: count,
      minTop: 1,
      series: [{ label: "Runs", values: metrics.runs_per_minute }],
    },
    {
      testId: "chart-latency",
      title: "Run latency",
      unit: "ms",
      format: ms,
      minTop: 10,
      series: [
        { label: "p50", values: metrics.latency_p50_ms },
        { label: "p95", values: metrics.latency_p95_ms },
        { label: "p99", values: metrics.latency_p99_ms },
      ],
    },
    {
      testId: "chart-errors",
      title: "Error rate",
      unit: "% of runs",
      format: percent,
      minTop: 5,
      series: [{ label: "Errors", values: scaled(metrics.error_rate, 100) }],
    },
    {
      testId: "chart-queue",
      title: "Queue",
      unit: "runs",
      format: count,
      minTop: 1,
      series: [
        { label: "Pending", values: metrics.pending_runs },
        { label: "Running", values: metrics.running_runs },
      ],
    },
  ];
  if (metrics.replicas.length === 0) return charts;
  return [
    ...charts,
    {
      testId: "chart-cpu",
      title: "CPU per replica",
      unit: "% of a core",
      format: percent,
      minTop: 5,
      series: replicas((replica) => replica.cpu_percent),
    },
    {
      testId: "chart-memory",
      title: "Memory per replica",
      unit: "MiB",
      format: mib,
      minTop: 16,
      series: replicas((replica) => replica.memory_bytes, 1 / 2 ** 20),
    },
  ];
}

/** The page's charts, in a chunk of their own: uPlot is loaded with the metrics page only. */
export function MetricsCharts({ metrics, phrase }: { metrics: DeploymentMetrics; phrase: string }) {
  const time = useMemo(() => metrics.time.map((iso) => Date.parse(iso) / 1000), [metrics]);
  const charts = useMemo(() => chartsOf(metrics), [metrics]);
  const runsPoints = metrics.runs_per_minute.filter((value) => value !== null).length;
  const runs = totalRuns(metrics);
  // A step the servers reported in counts its runs, 0 included: "no runs yet" is a window without one.
  const anyRun = runs > 0 || hasData(metrics.latency_p50_ms);
  const step = metrics.step_seconds >= 60 ? `${metrics.step_seconds / 60} min` : `${metrics.step_seconds} s`;

  return (
    <>
      <p aria-live="polite" data-testid="metrics-summary" data-runs-points={runsPoints} data-runs={runs}>
        {anyRun ? (
          <>
            <strong>
              {runs} {runs === 1 ? "run" : "runs"} {phrase}
            </strong>{" "}
            <span className="hint">(one point per {step})</span>
          </>
        ) : (
          <>
            <strong>No runs yet {phrase}.</strong> The charts fill in as the deployment serves runs.
          </>
        )}
      </p>
      <div className="charts">
        {charts.map((chart) => (
          <TimeSeriesChart key={chart.testId} time={time} {...chart} />
        ))}
        {metrics.replicas.length === 0 && <p className="hint">No replica reported its CPU and memory {phrase}.</p>}
      </div>
    </>
  );
}
