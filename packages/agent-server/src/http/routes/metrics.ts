import { z } from "zod";
import type { MetricsService, ServerMetrics } from "../../services/metrics.js";
import { type RouteDef, route } from "./route-table.js";

const metricsQuery = z.object({ format: z.enum(["json", "prometheus"]).default("json") });

const slotsSchema = z.object({ max: z.number().int(), active: z.number().int(), available: z.number().int() });
const metricsSchema = z.object({
  queue: z.object({ n_pending: z.number().int(), n_running: z.number().int() }),
  workers: slotsSchema.optional(),
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
  const lines = gauges.flatMap(([name, help, value]) => [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`]);
  return `${lines.join("\n")}\n`;
}

export function metricsRoutes(metrics: MetricsService): RouteDef[] {
  return [
    route(
      {
        method: "GET",
        path: "/metrics",
        summary: "Queue depth and worker slots (JSON, or Prometheus text with format=prometheus)",
        query: metricsQuery,
        responses: {
          200: {
            description:
              "`queue`: runs pending (available now) and running, every process of the database counted; " +
              "`workers`: this process's run slots (absent on a process that executes no runs)",
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
