import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { RunRepository } from "../storage/types.js";
import { type ExecutorDeps, executeRun } from "./executor.js";

export interface WorkerOptions {
  /** Runs executing at once in this process. */
  concurrency: number;
  leaseMs: number;
  /**
   * The process owns the database (embedded SQLite): runs left running are
   * requeued at start, and leases never lapse while it lives (a graph blocking
   * the event loop must not get its run requeued and executed twice).
   */
  exclusiveDatabase: boolean;
  /** Also looks for claimable runs this often, for brokers whose wake-ups may be lost (LISTEN/NOTIFY); default: never. */
  pollMs?: number;
}

/**
 * Claims runs from the database queue and executes them, up to `concurrency`
 * at a time. Woken at once when a run is created or a thread frees up; timers
 * cover delayed runs and lapsed leases, so nothing waits on a polling sleep
 * (unless `pollMs` asks for one, as a safety net for lossy wake-ups).
 */
export class RunWorker {
  readonly owner = `worker-${randomUUID()}`;
  private readonly running = new Set<Promise<void>>();
  private pumping = false;
  private pumpAgain = false;
  private stopped = false;
  private delayTimer: NodeJS.Timeout | undefined;
  private delayedUntil = Infinity;
  private readonly intervals: NodeJS.Timeout[] = [];
  private leaseKeeper: { stop(): Promise<void> } | undefined;

  constructor(
    private readonly deps: ExecutorDeps,
    private readonly options: WorkerOptions,
  ) {}

  private get runs(): RunRepository {
    return this.deps.storage.runs;
  }

  private get log(): Logger {
    return this.deps.logger;
  }

  async start(): Promise<void> {
    const requeued = await this.runs.requeueExpired({ all: this.options.exclusiveDatabase });
    if (requeued > 0) this.log.warn({ requeued }, "requeued runs left running by a stopped process");
    const { leaseMs } = this.options;
    const keepLeases = this.deps.storage.keepLeases;
    if (keepLeases) this.leaseKeeper = keepLeases(this.owner, leaseMs);
    else {
      const renew = () => void this.runs.heartbeat(this.owner, leaseMs).catch((err) => this.log.error({ err }, "heartbeat failed"));
      this.intervals.push(setInterval(renew, leaseMs / 3));
    }
    if (!this.options.exclusiveDatabase) this.intervals.push(setInterval(() => void this.sweep(), leaseMs / 2));
    if (this.options.pollMs) this.intervals.push(setInterval(() => this.wake(), this.options.pollMs));
    for (const interval of this.intervals) interval.unref();
    await this.scheduleNextDelayed();
    this.wake();
  }

  /**
   * Something may be claimable now (a run was created or one ended); a run
   * that becomes available later (`after_seconds`) gives its time.
   */
  wake(availableAt?: number): void {
    if (this.stopped) return;
    if (availableAt !== undefined && availableAt > Date.now()) {
      this.scheduleAt(availableAt);
      return;
    }
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    void this.pump();
  }

  /** Stops claiming; waits up to `graceMs` for executing runs. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.delayTimer);
    for (const interval of this.intervals) clearInterval(interval);
    const drained = Promise.allSettled([...this.running]);
    const grace = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([drained, grace]);
    await this.leaseKeeper?.stop();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopped && this.running.size < this.options.concurrency) {
          const run = await this.runs.claim(this.owner, this.options.leaseMs);
          if (!run) break;
          const execution: Promise<void> = executeRun(run, this.deps)
            .catch((err) => this.log.error({ err, run_id: run.run_id }, "run execution failed"))
            .finally(() => {
              this.running.delete(execution);
              this.wake();
            });
          this.running.add(execution);
        }
      } while (this.pumpAgain && !this.stopped);
    } catch (err) {
      this.log.error({ err }, "claiming runs failed");
    } finally {
      this.pumping = false;
    }
  }

  /** Wakes up when a delayed run becomes available (keeps the earliest such time). */
  private scheduleAt(at: number): void {
    if (this.stopped || (this.delayTimer && this.delayedUntil <= at)) return;
    clearTimeout(this.delayTimer);
    this.delayedUntil = at;
    this.delayTimer = setTimeout(() => {
      this.delayTimer = undefined;
      this.wake();
      void this.scheduleNextDelayed();
    }, Math.max(0, at - Date.now()) + 1);
    this.delayTimer.unref();
  }

  /** Looks up the next delayed run (at start, and after a delayed run became available). */
  private async scheduleNextDelayed(): Promise<void> {
    try {
      const at = await this.runs.nextAvailableAt();
      if (at !== undefined) this.scheduleAt(at);
    } catch (err) {
      this.log.error({ err }, "scheduling delayed runs failed");
    }
  }

  private async sweep(): Promise<void> {
    try {
      if ((await this.runs.requeueExpired({ all: false })) > 0) this.wake();
    } catch (err) {
      this.log.error({ err }, "sweeping lapsed leases failed");
    }
  }
}
