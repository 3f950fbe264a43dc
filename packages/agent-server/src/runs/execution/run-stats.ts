/** The final statuses a run's execution records (RunEnd["status"]). */
export const FINAL_RUN_STATUSES = ["success", "error", "timeout", "interrupted"] as const;
export type FinalRunStatus = (typeof FINAL_RUN_STATUSES)[number];

/**
 * Upper bounds (ms) of the run-duration histogram's buckets, fixed so that
 * sums over processes and intervals stay meaningful; a last, unbounded bucket
 * (+Inf) holds the rest.
 */
export const RUN_DURATION_BUCKETS_MS: readonly number[] = [
  50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000,
];

/** What this process's worker has executed since it started (GET /metrics). */
export interface RunStatsSnapshot {
  /** Runs whose end this process recorded, by final status. */
  finished: Record<FinalRunStatus, number>;
  /** From the start of their execution here to their end; counts cumulative per bound, as Prometheus' `le` buckets. */
  duration_ms: { le: number[]; counts: number[]; count: number; sum: number };
}

/**
 * Counters of the runs this process ended: a few integer increments per run,
 * no allocation (the snapshot is made when /metrics is read).
 */
export class RunStats {
  private readonly finished: Record<FinalRunStatus, number> = { success: 0, error: 0, timeout: 0, interrupted: 0 };
  /** Per bucket, not cumulative; one more slot for +Inf. */
  private readonly buckets = new Array<number>(RUN_DURATION_BUCKETS_MS.length + 1).fill(0);
  private sum = 0;

  record(status: string, durationMs: number): void {
    if (status in this.finished) this.finished[status as FinalRunStatus]++;
    let bucket = 0;
    while (bucket < RUN_DURATION_BUCKETS_MS.length && durationMs > (RUN_DURATION_BUCKETS_MS[bucket] as number)) bucket++;
    this.buckets[bucket] = (this.buckets[bucket] as number) + 1;
    this.sum += durationMs;
  }

  snapshot(): RunStatsSnapshot {
    const counts: number[] = [];
    let running = 0;
    for (let bucket = 0; bucket < RUN_DURATION_BUCKETS_MS.length; bucket++) {
      running += this.buckets[bucket] as number;
      counts.push(running);
    }
    const count = running + (this.buckets.at(-1) as number);
    return {
      finished: { ...this.finished },
      duration_ms: { le: [...RUN_DURATION_BUCKETS_MS], counts, count, sum: Math.round(this.sum) },
    };
  }
}
