import { z } from "zod";
import { METRICS_WINDOWS } from "../../services/deployment-metrics.js";

export const DeploymentMetricsQuery = z.object({
  window: z.enum(METRICS_WINDOWS).default("hour").describe("hour: 60 steps of a minute; day: 144 steps of ten minutes"),
});

/** One value per step of the window, oldest first; null where no sample (or no run) was seen. */
const Series = z.array(z.number().nullable());

export const DeploymentMetrics = z.object({
  deployment_id: z.string(),
  window: z.enum(METRICS_WINDOWS),
  step_seconds: z.number().int().describe("60 for hour, 600 for day"),
  time: z.array(z.string()).describe("ISO start of each step, oldest first; the last step is the one under way"),
  runs_per_minute: Series.describe("Runs ended in the step per minute of it"),
  error_rate: Series.describe("Of the runs ended in the step, the share that ended in error (0..1)"),
  latency_p50_ms: Series.describe("Median run duration, from the servers' histograms, interpolated in the bucket"),
  latency_p95_ms: Series,
  latency_p99_ms: Series,
  pending_runs: Series.describe("Runs pending on the deployment's database, as last seen in the step"),
  running_runs: Series.describe("Runs running, as last seen in the step"),
  replicas: z
    .array(
      z.object({
        name: z.string(),
        cpu_percent: Series.describe("CPU time used over wall time in the step, percent of one core"),
        memory_bytes: Series.describe("Resident memory, as last seen in the step"),
      }),
    )
    .describe("Each agent server (API replica) of the deployment, on the same time axis"),
});
