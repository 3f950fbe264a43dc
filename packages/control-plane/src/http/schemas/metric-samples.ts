import { METRIC_RUN_STATUSES, type MetricSample } from "@berth/listener-protocol";
import { z } from "zod";
import { Text, Uuid } from "./common.js";

const Count = z.number().int().min(0);
const Amount = z.number().min(0);

const RunCounts = z.strictObject(
  Object.fromEntries(METRIC_RUN_STATUSES.map((status) => [status, Count])) as Record<
    (typeof METRIC_RUN_STATUSES)[number],
    typeof Count
  >,
);

/** What a listener sends of its deployments' servers (listener-protocol.ts's MetricSample). */
const MetricSampleBody = z.strictObject({
  deployment_id: Uuid,
  replica: Text.min(1).max(100),
  timestamp: z.iso.datetime({ offset: true }).transform((value) => new Date(value).toISOString()),
  interval_seconds: z.number().positive(),
  cpu_seconds: Amount,
  memory_bytes: Count,
  pending_runs: Count,
  running_runs: Count,
  runs: z
    .strictObject({
      finished: RunCounts,
      duration_ms: z.strictObject({
        le: z.array(Amount).max(100),
        counts: z.array(Count).max(100),
        count: Count,
        sum: Amount,
      }),
    })
    .nullable(),
}) satisfies z.ZodType<MetricSample, unknown>;

export const MetricSamples = z.strictObject({ samples: z.array(MetricSampleBody).max(5000) });
