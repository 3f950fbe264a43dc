import type { WorkerSlots } from "../runs/execution/worker.js";
import type { Storage } from "../storage/types.js";

/** GET /metrics, as the official server's JSON shape names it. */
export interface ServerMetrics {
  /** Every process of the database: what an autoscaler of workers sizes them by. */
  queue: { n_pending: number; n_running: number };
  /** This process's run slots; absent on a process that executes no runs (role api), as on the official server. */
  workers?: { max: number; active: number; available: number };
}

/** The queue's depth and this process's run slots, for monitoring and for the listener's worker autoscaler. */
export class MetricsService {
  constructor(
    private readonly storage: Storage,
    private readonly workerSlots?: () => WorkerSlots,
  ) {}

  async read(): Promise<ServerMetrics> {
    const counts = await this.storage.runCounts();
    const metrics: ServerMetrics = { queue: { n_pending: counts.pending, n_running: counts.running } };
    const slots = this.workerSlots?.();
    if (slots) metrics.workers = { ...slots, available: Math.max(0, slots.max - slots.active) };
    return metrics;
  }
}
