import type { Logger } from "@berth/service-kit";
import { METRIC_RUN_STATUSES, type MetricSample } from "@berth/listener-protocol";
import { z } from "zod";
import type { ControlPlaneLink } from "./link.js";

/** One agent server whose /metrics the listener reads, called directly with the deployment's upstream key. */
export interface MetricsTarget {
  /** Names it within the deployment (replica-1, …). */
  replica: string;
  url: string;
  upstreamKey: string;
}

/** A deployment whose servers are read. */
export interface Metered {
  readonly deploymentId: string;
  /** Its serving revision's healthy servers now; none while nothing serves. */
  metricsTargets(): MetricsTarget[];
}

const count = z.number().int().min(0);
const runsBody = z.object({
  finished: z.object(
    Object.fromEntries(METRIC_RUN_STATUSES.map((status) => [status, count])) as Record<
      (typeof METRIC_RUN_STATUSES)[number],
      typeof count
    >,
  ),
  duration_ms: z.object({ le: z.array(z.number()), counts: z.array(count), count, sum: z.number().min(0) }),
});
const metricsBody = z.object({
  queue: z.object({ n_pending: count, n_running: count }),
  runs: runsBody.optional(),
  process: z.object({ cpu_seconds: z.number().min(0), resident_memory_bytes: count, start_time_seconds: count }),
});
type ServerMetrics = z.infer<typeof metricsBody>;
type RunTotals = z.infer<typeof runsBody>;

/**
 * A server first seen this soon after it started has all its counters
 * counted (it was just started, its runs are new); one seen later (the
 * listener restarted) gives a baseline only, not hours of runs in one step.
 */
const FRESH_START_MS = 120_000;

/** A server's counters as last read: the next sample's deltas are taken from them. */
interface Reading {
  at: number;
  startTime: number;
  cpuSeconds: number;
  runs: RunTotals | undefined;
}

/** `GET /metrics?format=json` of one server; rejects when it cannot be read. */
async function readMetrics(target: MetricsTarget, timeoutMs: number): Promise<ServerMetrics> {
  const response = await fetch(new URL("/metrics?format=json", target.url), {
    headers: { "x-api-key": target.upstreamKey },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
  return metricsBody.parse(await response.json());
}

/** Counters since `previous`; all of them when the server restarted (a counter went back, or its start time moved). */
function runDeltas(current: RunTotals, previous: RunTotals | undefined): RunTotals {
  const sameBuckets =
    previous !== undefined &&
    previous.duration_ms.le.length === current.duration_ms.le.length &&
    previous.duration_ms.le.every((bound, index) => bound === current.duration_ms.le[index]);
  if (!previous || !sameBuckets || current.duration_ms.count < previous.duration_ms.count) return current;
  const finished = { ...current.finished };
  for (const status of METRIC_RUN_STATUSES) finished[status] = Math.max(0, finished[status] - previous.finished[status]);
  const { duration_ms: now } = current;
  return {
    finished,
    duration_ms: {
      le: now.le,
      counts: now.counts.map((value, index) => Math.max(0, value - (previous.duration_ms.counts[index] ?? 0))),
      count: now.count - previous.duration_ms.count,
      sum: Math.max(0, now.sum - previous.duration_ms.sum),
    },
  };
}

/**
 * Every interval, reads `/metrics` of each healthy server of the deployments
 * the listener serves and sends the control plane one sample per server:
 * counters as deltas since the previous read, gauges as read. A server that
 * cannot be read is skipped (logged at debug); the next read catches up.
 */
export class MetricsPusher {
  private readonly readings = new Map<string, Reading>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly intervalMs: number,
    private readonly link: ControlPlaneLink,
    private readonly deployments: () => Iterable<Metered>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One round: read every server, send what was read. Never rejects. */
  async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const reads: Promise<MetricSample | undefined>[] = [];
      const seen = new Set<string>();
      for (const deployment of this.deployments()) {
        for (const target of deployment.metricsTargets()) {
          const key = `${deployment.deploymentId}/${target.replica}`;
          seen.add(key);
          reads.push(this.sample(deployment.deploymentId, key, target));
        }
      }
      const samples = (await Promise.all(reads)).filter((sample) => sample !== undefined);
      for (const key of this.readings.keys()) if (!seen.has(key)) this.readings.delete(key);
      if (samples.length > 0) await this.link.pushMetrics(samples);
    } catch (err) {
      this.logger.warn({ err }, "sending deployments' metrics to the control plane failed");
    } finally {
      this.busy = false;
    }
  }

  /** One server's sample; undefined when it cannot be read or gives the baseline only. */
  private async sample(deploymentId: string, key: string, target: MetricsTarget): Promise<MetricSample | undefined> {
    let metrics: ServerMetrics;
    try {
      metrics = await readMetrics(target, Math.min(5_000, this.intervalMs));
    } catch (err) {
      this.logger.debug({ err, deployment_id: deploymentId, replica: target.replica }, "reading a server's metrics failed");
      return undefined;
    }
    const now = Date.now();
    const { process } = metrics;
    const startedAt = process.start_time_seconds * 1000;
    const previous = this.readings.get(key);
    this.readings.set(key, {
      at: now,
      startTime: process.start_time_seconds,
      cpuSeconds: process.cpu_seconds,
      runs: metrics.runs,
    });
    const restarted =
      previous !== undefined && (previous.startTime !== process.start_time_seconds || process.cpu_seconds < previous.cpuSeconds);
    // Its first read: counted from its start when it just started, else a baseline for the next.
    if (!previous && now - startedAt > FRESH_START_MS) return undefined;
    const since = previous && !restarted ? previous : undefined;
    return {
      deployment_id: deploymentId,
      replica: target.replica,
      timestamp: new Date(now).toISOString(),
      interval_seconds: Math.max(0.001, (now - (since?.at ?? Math.min(now, startedAt))) / 1000),
      cpu_seconds: process.cpu_seconds - (since?.cpuSeconds ?? 0),
      memory_bytes: process.resident_memory_bytes,
      pending_runs: metrics.queue.n_pending,
      running_runs: metrics.queue.n_running,
      runs: metrics.runs ? runDeltas(metrics.runs, since?.runs) : null,
    };
  }
}
