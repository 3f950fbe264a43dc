/** The window a metrics answer covers. */
export type MetricsWindow = "hour" | "day";
type Values = (number | null)[];

/** `GET v2/deployments/<id>/metrics?window=…`: the control plane's series of a deployment, oldest point first. */
export interface DeploymentMetrics {
  deployment_id: string;
  window: MetricsWindow;
  step_seconds: number;
  time: string[];
  runs_per_minute: Values;
  error_rate: Values;
  latency_p50_ms: Values;
  latency_p95_ms: Values;
  latency_p99_ms: Values;
  pending_runs: Values;
  running_runs: Values;
  replicas: { name: string; cpu_percent: Values; memory_bytes: Values }[];
}
