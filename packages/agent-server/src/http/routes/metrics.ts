import { z } from "zod";
import type { RunStatsSnapshot } from "../../runs/execution/run-stats.js";
import type { MetricsService, ServerMetrics } from "../../services/metrics.js";
import { type RouteDef, route } from "./route-table.js";

const metricsQuery = z.object({ format: z.enum(["json", "prometheus"]).default("json") });

const slotsSchema = z.object({ max: z.number().int(), active: z.number().int(), available: z.number().int() });
const count = z.number().int();
const runsSchema = z.object({
  finished: z
    .object({ success: count, error: count, timeout: count, interrupted: count })
    .describe("Runs whose end this process recorded since it started, by final status"),
  duration_ms: z
    .object({
      le: z.array(z.number()).describe("Upper bounds of the buckets (ms); the last, +Inf, is `count`"),
      counts: z.array(count).describe("Runs that took at most each bound (cumulative, as Prometheus' buckets)"),
      count,
      sum: z.number().describe("Total of their durations (ms)"),
    })
    .describe("From the start of each run's execution in this process to its end"),
});
const processSchema = z.object({
  cpu_seconds: z.number().describe("User plus system CPU time of this process"),
  resident_memory_bytes: count,
  start_time_seconds: count.describe("When this process started (Unix time): counters restart from zero with it"),
});
const metricsSchema = z.object({
  queue: z.object({
    n_pending: count,
    n_running: count,
    next_delayed_at: z.iso
      .datetime()
      .optional()
      .describe("When the earliest run delayed by after_seconds becomes due; absent when none is"),
  }),
  workers: slotsSchema.optional(),
  runs: runsSchema.optional(),
  process: processSchema,
});

/** Prometheus' text exposition format. */
const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The official server's gauge names, so its dashboards and alerts read Berth's too. */
function prometheusText(metrics: ServerMetrics): string {
  const gauges: [name: string, help: string, value: number][] = [
    ["lg_api_num_pending_runs", "The number of runs currently pending.", metrics.queue.n_pending],
    ["lg_api_num_running_runs", "The number of runs currently running.", metrics.queue.n_running],
  ];
  if (metrics.workers) {
    gauges.push(
      ["lg_api_workers_max", "The maximum number of runs this process executes at once.", metrics.workers.max],
      ["lg_api_workers_active", "The number of runs this process executes now.", metrics.workers.active],
      ["lg_api_workers_available", "The number of runs this process could start now.", metrics.workers.available],
    );
  }
  const { process } = metrics;
  gauges.push(
    ["berth_process_resident_memory_bytes", "Resident memory of this process.", process.resident_memory_bytes],
    ["berth_process_start_time_seconds", "When this process started (Unix time).", process.start_time_seconds],
  );
  const lines = gauges.flatMap(([name, help, value]) => [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`]);
  lines.push(
    "# HELP berth_process_cpu_seconds_total User and system CPU time of this process.",
    "# TYPE berth_process_cpu_seconds_total counter",
    `berth_process_cpu_seconds_total ${process.cpu_seconds}`,
  );
  if (metrics.runs) lines.push(...runLines(metrics.runs));
  return `${lines.join("\n")}\n`;
}

/** The runs this process ended: a counter by status and a histogram of their durations. */
function runLines(runs: RunStatsSnapshot): string[] {
  const lines = [
    "# HELP berth_runs_finished_total Runs whose end this process recorded, by final status.",
    "# TYPE berth_runs_finished_total counter",
  ];
  for (const [status, value] of Object.entries(runs.finished))
    lines.push(`berth_runs_finished_total{status="${status}"} ${value}`);
  const { le, counts, count, sum } = runs.duration_ms;
  lines.push(
    "# HELP berth_run_duration_milliseconds Time from the start of a run's execution in this process to its end.",
    "# TYPE berth_run_duration_milliseconds histogram",
    ...le.map((bound, index) => `berth_run_duration_milliseconds_bucket{le="${bound}"} ${counts[index]}`),
    `berth_run_duration_milliseconds_bucket{le="+Inf"} ${count}`,
    `berth_run_duration_milliseconds_sum ${sum}`,
    `berth_run_duration_milliseconds_count ${count}`,
  );
  return lines;
}

export function metricsRoutes(metrics: MetricsService): RouteDef[] {
  return [
    route(
      {
        method: "GET",
        path: "/metrics",
        summary: "Queue depth, worker slots, runs ended and process resources (JSON, or Prometheus text with format=prometheus)",
        query: metricsQuery,
        responses: {
          200: {
            description:
              "`queue`: runs pending (available now) and running, every process of the database counted; " +
              "`workers`: this process's run slots and `runs`: the runs it ended since it started, by status and duration " +
              "(both absent on a process that executes no runs); `process`: its CPU time and resident memory",
            schema: metricsSchema,
          },
        },
      },
      async ({ query, reply }) => {
        const current = await metrics.read();
        if (query.format === "prometheus") return reply.type(PROMETHEUS_CONTENT_TYPE).send(prometheusText(current));
        return current;
      },
    ),
  ];
}
