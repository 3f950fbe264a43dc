import type { RunStatsSnapshot } from "../runs/execution/run-stats.js";
import type { WorkerSlots } from "../runs/execution/worker.js";
import type { Storage } from "../storage/types.js";

/** This process's resources, as Node.js counts them. */
export interface ProcessMetrics {
  /** User plus system CPU time since the process started (process.cpuUsage). */
  cpu_seconds: number;
  /** Resident set size (process.memoryUsage().rss). */
  resident_memory_bytes: number;
  /** When the process started: a reader tells a restart (its counters back at zero) by it. */
  start_time_seconds: number;
}

/** GET /metrics, as the official server's JSON shape names it, with Berth's own additions. */
export interface ServerMetrics {
  /** Every process of the database: what an autoscaler of workers sizes them by. */
  queue: { n_pending: number; n_running: number; next_delayed_at?: string };
  /** This process's run slots; absent on a process that executes no runs (role api), as on the official server. */
  workers?: { max: number; active: number; available: number };
  /** The runs this process ended since it started; absent with `workers`. */
  runs?: RunStatsSnapshot;
  process: ProcessMetrics;
}

/** What the metrics read of this process's worker. */
export interface MeteredWorker {
  slots(): WorkerSlots;
  runStats(): RunStatsSnapshot;
}

/** Whole seconds since the epoch at which this process started. */
const START_TIME_SECONDS = Math.round((Date.now() - process.uptime() * 1000) / 1000);

/** The queue's depth, this process's run slots, runs and resources: for monitoring and for the listener. */
export class MetricsService {
  constructor(
    private readonly storage: Storage,
    private readonly worker?: MeteredWorker,
  ) {}

  async read(): Promise<ServerMetrics> {
    const counts = await this.storage.runCounts();
    const metrics: ServerMetrics = {
      queue: {
        n_pending: counts.pending,
        n_running: counts.running,
        // Only when a run waits for its after_seconds: a sleeping deployment is woken for it (the listener's idle sleeper).
        ...(counts.nextDelayedAt === null ? {} : { next_delayed_at: new Date(counts.nextDelayedAt).toISOString() }),
      },
      process: processMetrics(),
    };
    if (this.worker) {
      const slots = this.worker.slots();
      metrics.workers = { ...slots, available: Math.max(0, slots.max - slots.active) };
      metrics.runs = this.worker.runStats();
    }
    return metrics;
  }
}

function processMetrics(): ProcessMetrics {
  const cpu = process.cpuUsage();
  return {
    cpu_seconds: (cpu.user + cpu.system) / 1e6,
    resident_memory_bytes: process.memoryUsage.rss(),
    start_time_seconds: START_TIME_SECONDS,
  };
}
