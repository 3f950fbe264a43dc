import type { MetricSample } from "@berth/listener-protocol";
import type { ControlPlaneStorage } from "../storage/types.js";
import { notFound } from "./deployments.js";

export const METRICS_WINDOWS = ["hour", "day"] as const;
export type MetricsWindow = (typeof METRICS_WINDOWS)[number];

/** Each window's steps: an hour of minutes, a day of ten minutes. */
const WINDOWS: Record<MetricsWindow, { stepSeconds: number; steps: number }> = {
  hour: { stepSeconds: 60, steps: 60 },
  day: { stepSeconds: 600, steps: 144 },
};

/** Old samples go at most this often (on a write), whichever process writes. */
const PRUNE_EVERY_MS = 60_000;

type Series = (number | null)[];

/** GET /v2/deployments/{id}/metrics: one value per step of the window, oldest first; null where nothing was seen. */
export interface DeploymentMetrics {
  deployment_id: string;
  window: MetricsWindow;
  step_seconds: number;
  time: string[];
  runs_per_minute: Series;
  error_rate: Series;
  latency_p50_ms: Series;
  latency_p95_ms: Series;
  latency_p99_ms: Series;
  pending_runs: Series;
  running_runs: Series;
  replicas: { name: string; cpu_percent: Series; memory_bytes: Series }[];
}

/** Runs ended in one step, over every server: their statuses and summed duration histogram. */
interface RunTally {
  finished: number;
  errors: number;
  le: number[] | undefined;
  counts: number[];
  count: number;
}

/**
 * The deployments' metric series: samples listeners send (their servers'
 * /metrics, counters as deltas) are kept for the retention and read back as
 * fixed steps over the last hour or day.
 */
export class DeploymentMetricsService {
  private lastPrune = 0;

  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly retentionSeconds: number,
  ) {}

  /** Keeps samples (of deployments the caller checked), and prunes the expired ones now and then. */
  async record(samples: MetricSample[]): Promise<void> {
    if (samples.length > 0) await this.storage.deploymentMetrics.append(samples);
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await this.storage.deploymentMetrics.prune(new Date(now - this.retentionSeconds * 1000).toISOString());
  }

  async read(tenantId: string, deploymentId: string, window: MetricsWindow): Promise<DeploymentMetrics> {
    if (!(await this.storage.deployments.get(tenantId, deploymentId))) throw notFound(deploymentId);
    const { stepSeconds, steps } = WINDOWS[window];
    const stepMs = stepSeconds * 1000;
    // The last step is the one under way.
    const start = (Math.floor(Date.now() / stepMs) + 1 - steps) * stepMs;
    const samples = await this.storage.deploymentMetrics.since(deploymentId, new Date(start).toISOString());
    const byStep: MetricSample[][] = Array.from({ length: steps }, () => []);
    for (const sample of samples) {
      const step = Math.floor((Date.parse(sample.timestamp) - start) / stepMs);
      if (step >= 0 && step < steps) byStep[step]?.push(sample);
    }
    const tallies = byStep.map((inStep) => (inStep.length > 0 ? tally(inStep) : undefined));
    const lastOf = (pick: (sample: MetricSample) => number): Series =>
      byStep.map((inStep) => (inStep.length > 0 ? pick(inStep.at(-1) as MetricSample) : null));
    const quantile = (q: number): Series => tallies.map((runs) => (runs && runs.count > 0 ? histogramQuantile(q, runs) : null));
    return {
      deployment_id: deploymentId,
      window,
      step_seconds: stepSeconds,
      time: byStep.map((_, step) => new Date(start + step * stepMs).toISOString()),
      runs_per_minute: tallies.map((runs) => (runs ? runs.finished / (stepSeconds / 60) : null)),
      error_rate: tallies.map((runs) => (runs && runs.finished > 0 ? runs.errors / runs.finished : null)),
      latency_p50_ms: quantile(0.5),
      latency_p95_ms: quantile(0.95),
      latency_p99_ms: quantile(0.99),
      pending_runs: lastOf((sample) => sample.pending_runs),
      running_runs: lastOf((sample) => sample.running_runs),
      replicas: replicaSeries(byStep),
    };
  }
}

/** The runs of one step's samples, their histograms summed (those with other buckets than the first left out). */
function tally(samples: MetricSample[]): RunTally {
  const runs: RunTally = { finished: 0, errors: 0, le: undefined, counts: [], count: 0 };
  for (const { runs: ended } of samples) {
    if (!ended) continue;
    const { finished, duration_ms } = ended;
    runs.finished += finished.success + finished.error + finished.timeout + finished.interrupted;
    runs.errors += finished.error;
    runs.le ??= duration_ms.le;
    if (!sameBounds(runs.le, duration_ms.le)) continue;
    duration_ms.counts.forEach((value, index) => {
      runs.counts[index] = (runs.counts[index] ?? 0) + value;
    });
    runs.count += duration_ms.count;
  }
  return runs;
}

function sameBounds(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((bound, index) => bound === b[index]);
}

/**
 * The q-quantile of a cumulative histogram, linearly interpolated within its
 * bucket (as Prometheus' histogram_quantile); past the last bound, that bound.
 */
export function histogramQuantile(q: number, { le, counts, count }: Pick<RunTally, "le" | "counts" | "count">): number {
  const bounds = le ?? [];
  const rank = q * count;
  for (let index = 0; index < bounds.length; index++) {
    const below = index === 0 ? 0 : (counts[index - 1] ?? 0);
    const upTo = counts[index] ?? 0;
    if (upTo < rank || upTo === below) continue;
    const lower = index === 0 ? 0 : (bounds[index - 1] as number);
    return lower + ((bounds[index] as number) - lower) * ((rank - below) / (upTo - below));
  }
  return bounds.at(-1) ?? 0;
}

/** Each server's CPU (% of one core over the step) and memory (last seen), by name. */
function replicaSeries(byStep: MetricSample[][]): DeploymentMetrics["replicas"] {
  const names = [...new Set(byStep.flat().map((sample) => sample.replica))].sort((a, b) =>
    a.localeCompare(b, "en", { numeric: true }),
  );
  return names.map((name) => {
    const cpu: Series = [];
    const memory: Series = [];
    for (const inStep of byStep) {
      const mine = inStep.filter((sample) => sample.replica === name);
      const seconds = mine.reduce((sum, sample) => sum + sample.interval_seconds, 0);
      const used = mine.reduce((sum, sample) => sum + sample.cpu_seconds, 0);
      cpu.push(mine.length > 0 && seconds > 0 ? (used / seconds) * 100 : null);
      memory.push(mine.at(-1)?.memory_bytes ?? null);
    }
    return { name, cpu_percent: cpu, memory_bytes: memory };
  });
}
