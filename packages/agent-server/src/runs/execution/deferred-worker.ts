import { RunStats, type RunStatsSnapshot } from "./run-stats.js";
import type { RunWorker, SlotReservation, WorkerSlots } from "./worker.js";

/**
 * A run worker whose module loads when it starts: the executor brings
 * LangGraph, which a server answering its first requests does not need yet
 * (`berth dev` starts its worker after it listens). Until then it takes no
 * run at creation; runs created meanwhile wait in the queue, which the
 * worker's start reads.
 */
export class DeferredWorker {
  private worker: RunWorker | undefined;
  private stopped = false;
  private readonly idle = new RunStats().snapshot();

  constructor(
    private readonly load: () => Promise<RunWorker>,
    private readonly concurrency: number,
  ) {}

  /** Names the worker in its leases; empty until it started. */
  get owner(): string {
    return this.worker?.owner ?? "";
  }

  async start(): Promise<void> {
    const worker = await this.load();
    if (this.stopped) return; // stopped while its module loaded: never started, nothing to hand back
    this.worker = worker;
    await worker.start();
  }

  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    await this.worker?.stop(graceMs);
  }

  slots(): WorkerSlots {
    return this.worker?.slots() ?? { max: this.concurrency, active: 0 };
  }

  runStats(): RunStatsSnapshot {
    return this.worker?.runStats() ?? this.idle;
  }

  reserveSlot(): SlotReservation | undefined {
    return this.worker?.reserveSlot();
  }
}
