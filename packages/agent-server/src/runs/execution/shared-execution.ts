import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { DeferredWorker } from "./deferred-worker.js";
import type { ExecutionThread } from "./execution-thread.js";
import type { RunStatsSnapshot } from "./run-stats.js";
import type { SlotReservation, WorkerSlots } from "./worker.js";

/**
 * A run's creation claims it for the main thread while that thread executes at most 1/MAIN_THREAD_WEIGHT as many runs
 * as the execution thread: it also serves every run's HTTP side (measured: with equal shares it was the busier thread,
 * its runs waiting for a core, the execution thread idle a third of the time).
 */
const MAIN_THREAD_WEIGHT = 2;
/** How often the main thread's load is looked at, at most (each run's creation may look). */
const LOAD_WINDOW_MS = 500;
/** The main thread is busy when its event loop was this busy over a window… */
const BUSY_UTILIZATION = 0.6;
/** …with at least this many runs executing on it (runs waiting on I/O do not call for a second core). */
const BUSY_RUNS = 2;

/**
 * Runs executing on the main thread's worker and, once runs keep that
 * thread busy, also in an execution thread beside it: a second core for
 * graphs when the host has one, paid for (a second copy of the graphs, a
 * thread's memory) only by a server under load. Each run's creation claims
 * it for the less loaded side, weighing the main thread's runs double (the
 * main thread on a tie: a lone run is fastest there, no hop between
 * threads); runs left to the queue go to whichever side claims first. The main thread's worker owns
 * the file's runs (it requeues what a previous process left running); a
 * thread that crashes has its runs requeued by the next one.
 */
export class SharedExecution {
  private threadStart: Promise<void> | undefined;
  private threadUp = false;
  private stopped = false;
  private utilization = performance.eventLoopUtilization();
  private lookedAt = performance.now();

  constructor(
    private readonly main: DeferredWorker,
    private readonly thread: ExecutionThread,
    private readonly logger: Logger,
  ) {}

  get owner(): string {
    return this.main.owner;
  }

  async start(): Promise<void> {
    await this.main.start();
  }

  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    const thread = this.threadStart?.then(
      () => this.thread.stop(graceMs),
      () => {},
    );
    await Promise.all([this.main.stop(graceMs), thread]);
  }

  slots(): WorkerSlots {
    const main = this.main.slots();
    const thread = this.thread.slots();
    return { max: main.max + thread.max, active: main.active + thread.active };
  }

  runStats(): RunStatsSnapshot {
    const main = this.main.runStats();
    if (!this.threadUp) return main;
    const thread = this.thread.runStats();
    const finished = { ...main.finished };
    for (const [status, count] of Object.entries(thread.finished)) finished[status as keyof typeof finished] += count;
    const duration = main.duration_ms;
    return {
      finished,
      duration_ms: {
        le: duration.le,
        counts: duration.counts.map((count, i) => count + (thread.duration_ms.counts[i] ?? 0)),
        count: duration.count + thread.duration_ms.count,
        sum: duration.sum + thread.duration_ms.sum,
      },
    };
  }

  reserveSlot(): SlotReservation | undefined {
    const main = this.main.slots();
    if (!this.threadUp) {
      if (!this.threadStart && main.active >= BUSY_RUNS && this.mainThreadBusy()) this.startThread();
      return this.main.reserveSlot();
    }
    return main.active * MAIN_THREAD_WEIGHT <= this.thread.slots().active
      ? (this.main.reserveSlot() ?? this.thread.reserveSlot())
      : (this.thread.reserveSlot() ?? this.main.reserveSlot());
  }

  /** Whether the main thread's event loop was busy over the last window (false until a window has passed). */
  private mainThreadBusy(): boolean {
    const now = performance.now();
    if (now - this.lookedAt < LOAD_WINDOW_MS) return false;
    const window = performance.eventLoopUtilization(this.utilization);
    this.utilization = performance.eventLoopUtilization();
    this.lookedAt = now;
    return window.utilization >= BUSY_UTILIZATION;
  }

  /** Starts the execution thread once; a thread that fails to start leaves the runs to the main thread. */
  private startThread(): void {
    if (this.stopped) return;
    this.logger.info("runs keep the main thread busy: starting an execution thread beside it");
    this.threadStart = this.thread.start().then(
      () => {
        this.threadUp = !this.stopped;
      },
      (err) => {
        this.logger.error({ err }, "the execution thread did not start: runs execute on the main thread only");
      },
    );
  }
}
