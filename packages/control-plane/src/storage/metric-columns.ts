import type { MetricSample } from "@berth/listener-protocol";

/** The columns of deployment_metrics both backends write and read, in this order. */
export const METRIC_COLUMNS =
  "deployment_id, replica, timestamp, interval_seconds, cpu_seconds, memory_bytes, pending_runs, running_runs, runs";

/** A row as read, `runs` parsed. */
export type MetricRow = MetricSample;

/** A sample with its keys in the protocol's order, whichever backend read it. */
export function sampleOf(row: MetricRow): MetricSample {
  return {
    deployment_id: row.deployment_id,
    replica: row.replica,
    timestamp: row.timestamp,
    interval_seconds: Number(row.interval_seconds),
    cpu_seconds: Number(row.cpu_seconds),
    memory_bytes: Number(row.memory_bytes),
    pending_runs: Number(row.pending_runs),
    running_runs: Number(row.running_runs),
    runs: row.runs,
  };
}
