import type { Logger } from "pino";
import type { LeaseRenewal, RunClaimant, RunLease, RunRepository } from "../../storage/types.js";
import { type ExecutableRun, type ExecutorDeps, executeRun, type RunEnding } from "./executor.js";
import { deadOwnersOnThisHost, newLeaseOwner } from "./lease-owner.js";
import { mainThreadLeases } from "./main-thread-leases.js";
import { endInError, runError } from "./run-salvage.js";
import { RunStats, type RunStatsSnapshot } from "./run-stats.js";
import type { TestFaults } from "./test-faults.js";

export interface WorkerOptions {
  /** Runs executing at once in this process. */
  concurrency: number;
  leaseMs: number;
  /**
   * The process owns the database (embedded SQLite): runs left running are
   * requeued at start, and leases are renewed on the main thread (no other
   * process requeues them, and the sweeps here skip the runs executing here).
   */
  exclusiveDatabase: boolean;
  /** Owners whose runs are requeued at start, besides dead processes' (a crashed execution thread's, from the same process). */
  requeueOwners?: string[];
  /** Also looks for claimable runs this often, for brokers whose wake-ups may be lost (LISTEN/NOTIFY); default: never. */
  pollMs?: number;
  /** Test-only faults to inject (test-faults.ts); none in production. */
  faults?: TestFaults;
  /** Called when a run starts or stops holding a slot (the execution thread reports its slots to the main thread). */
  slotsChanged?: () => void;
}

/** A slot held for a run being created: its creation claims the run for `claimant`, or the slot is released (once, either). */
export interface SlotReservation {
  claimant: RunClaimant;
  /** Executes the run the creation claimed with the slot. */
  execute(run: ExecutableRun): void;
  /** Gives the slot back (the creation did not claim the run, or failed). */
  release(): void;
}

/** A process's run slots: how many runs it may execute at once, and how many it executes now. */
export interface WorkerSlots {
  max: number;
  active: number;
}

/** Sweeps for runs nobody executes are a quarter lease apart, but at most this far (and at least 100 ms). */
const MAX_SWEEP_INTERVAL_MS = 2_000;

/** After the grace period, how long runs aborted for shutdown get to hand themselves back. */
const HANDOVER_WAIT_MS = 2_000;

/** Time between two sweeps of a worker: a lapsed lease is found at most this long after it lapsed. */
export function sweepIntervalMs(leaseMs: number): number {
  return Math.max(100, Math.min(leaseMs / 4, MAX_SWEEP_INTERVAL_MS));
}

/**
 * Claims runs from the database queue and executes them, up to `concurrency`
 * at a time. Woken at once when a run is created or a thread frees up; timers
 * cover delayed runs, and sweeps requeue the runs nobody executes any more
 * (lease lapsed, owner dead), so nothing waits on a polling sleep (unless
 * `pollMs` asks for one, as a safety net for lossy wake-ups).
 */
export class RunWorker {
  /** Names this worker, its process and host in the leases it holds (see lease-owner.ts). */
  readonly owner = newLeaseOwner();
  private readonly executing = new Map<string, Promise<void>>();
  private readonly deps: ExecutorDeps;
  /** The claiming loop under way, if any: a stop waits for it, so a run it claims is executing (or handed back). */
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  /**
   * False once a claim found nothing and no pending run at all, until the next
   * wake-up: a run's end then makes nothing claimable (no run waits behind it
   * on its thread), and claiming after it would be a round trip for nothing.
   */
  private mayFindRuns = true;
  /** Slots held for runs being created (reserveSlot). */
  private reserved = 0;
  private stopped = false;
  private delayTimer: NodeJS.Timeout | undefined;
  private delayedUntil = Infinity;
  private readonly intervals: NodeJS.Timeout[] = [];
  private leases: LeaseRenewal | undefined;
  private readonly stats = new RunStats();

  constructor(
    deps: ExecutorDeps,
    private readonly options: WorkerOptions,
  ) {
    const runs = options.faults ? options.faults.wrapRuns(deps.storage.runs) : deps.storage.runs;
    this.deps = { ...deps, storage: { ...deps.storage, runs }, stats: this.stats };
  }

  private get runs(): RunRepository {
    return this.deps.storage.runs;
  }

  private get log(): Logger {
    return this.deps.logger;
  }

  async start(): Promise<void> {
    // A restart of the only process requeues everything; otherwise the runs of this host's dead processes (an
    // earlier incarnation of this one, say) are requeued at once, and other processes' runs once their lease lapses.
    const deadOwners = this.options.exclusiveDatabase
      ? []
      : [...(await this.deadLocalOwners()), ...(this.options.requeueOwners ?? [])];
    const requeued = await this.runs.requeueExpired({ all: this.options.exclusiveDatabase, deadOwners });
    if (requeued > 0) this.log.warn({ requeued, dead_owners: deadOwners }, "requeued runs left running by a stopped process");
    // Stopped while it started (a `berth dev` whose graphs failed to load closes its storage meanwhile): no lease
    // keeper, sweeps or timers may outlive that stop.
    if (this.stopped) return;
    const { leaseMs } = this.options;
    const keeper = this.deps.storage.keepLeases ?? mainThreadLeases(this.runs);
    this.leases = keeper(this.owner, leaseMs, {
      lost: (runIds) => this.leasesLost(runIds),
      failed: (message) => this.log.warn({ error: message }, "renewing leases failed"),
    });
    this.intervals.push(setInterval(() => void this.sweep(), sweepIntervalMs(leaseMs)));
    if (this.options.pollMs) this.intervals.push(setInterval(() => this.wake(), this.options.pollMs));
    for (const interval of this.intervals) interval.unref();
    await this.scheduleNextDelayed();
    this.wake();
  }

  /** Its slots now (GET /metrics): those executing include runs finishing their handover at a shutdown. */
  slots(): WorkerSlots {
    return { max: this.options.concurrency, active: this.executing.size };
  }

  /** The runs it ended since the process started, with their durations (GET /metrics). */
  runStats(): RunStatsSnapshot {
    return this.stats.snapshot();
  }

  /**
   * Holds a free slot for a run about to be created, which its creation may
   * claim for this worker (RunRepository.create's `claimFor`): the run then
   * starts without waiting for a claim of its own. Undefined when every slot
   * is taken or the worker stops.
   */
  reserveSlot(): SlotReservation | undefined {
    if (this.stopped || this.executing.size + this.reserved >= this.options.concurrency) return undefined;
    this.reserved++;
    return {
      claimant: { owner: this.owner, leaseMs: this.options.leaseMs },
      execute: (run) => {
        this.reserved--;
        this.adopt(run);
      },
      release: () => {
        // Only a slot that filled the last free place can have held a claim off.
        const heldOff = this.executing.size + this.reserved >= this.options.concurrency;
        this.reserved--;
        if (heldOff) this.wake();
      },
    };
  }

  /** Executes a run claimed for this worker by its creation (here, or on the main thread of an execution thread). */
  adopt(run: ExecutableRun): void {
    // Claimed as the worker began to stop: back to the queue, its attempt not counted, as a stop does.
    if (this.stopped)
      void this.runs
        .release(this.owner, { run_id: run.run_id, attempt: run.attempt })
        .then(() => this.deps.broker.wakeWorkers())
        .catch(() => {});
    else this.execute(run);
  }

  /**
   * Something may be claimable now (a run was created or one ended); a run
   * that becomes available later (`after_seconds`) gives its time.
   */
  wake(availableAt?: number): void {
    if (this.stopped) return;
    this.mayFindRuns = true;
    if (availableAt !== undefined && availableAt > Date.now()) {
      this.scheduleAt(availableAt);
      return;
    }
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
    });
  }

  /**
   * Stops claiming; waits up to `graceMs` for executing runs, then hands the
   * others back to the queue (their attempt not counted) for another worker.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.delayTimer);
    for (const interval of this.intervals) clearInterval(interval);
    await this.pumping;
    await this.drained(graceMs);
    if (this.executing.size > 0) {
      for (const runId of this.executing.keys()) this.deps.control.abort(runId, "shutdown");
      await this.drained(HANDOVER_WAIT_MS);
    }
    try {
      // Runs whose execution did not hand them back by now (a graph ignoring the abort).
      const released = await this.runs.release(this.owner);
      if (released > 0) {
        this.log.warn({ released }, "released unfinished runs");
        this.deps.broker.wakeWorkers();
      }
    } catch (err) {
      this.log.error({ err }, "releasing runs failed: their leases will lapse");
    }
    await this.leases?.stop();
  }

  /** The lease owners that are dead processes of this host; none when the `pid-check` fault makes every owner look remote. */
  private async deadLocalOwners(): Promise<string[]> {
    if (this.options.faults?.has("pid-check")) return [];
    return deadOwnersOnThisHost(await this.runs.leaseOwners());
  }

  private async drained(waitMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([Promise.allSettled([...this.executing.values()]), waited]);
    clearTimeout(timer);
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopped && this.executing.size + this.reserved < this.options.concurrency) {
          const run = await this.runs.claim(this.owner, this.options.leaseMs, (pendingLeft) => {
            // A wake-up during the claim comes with another pass of the loop: that claim's answer counts.
            if (!this.pumpAgain) this.mayFindRuns = pendingLeft;
          });
          if (!run) break;
          this.execute(run);
        }
      } while (this.pumpAgain && !this.stopped);
    } catch (err) {
      this.log.error({ err }, "claiming runs failed");
    }
  }

  /** Executes a claimed run under its lease, renewed until the execution is over. */
  private execute(run: ExecutableRun): void {
    const lease: RunLease = { owner: this.owner, attempt: run.attempt };
    this.leases?.hold({ run_id: run.run_id, attempt: run.attempt });
    const execution = this.watch(run, lease).finally(() => {
      if (this.executing.get(run.run_id) === execution) this.executing.delete(run.run_id);
      this.leases?.drop(run.run_id);
      this.options.slotsChanged?.();
      if (this.mayFindRuns) this.wake();
    });
    this.executing.set(run.run_id, execution);
    this.options.slotsChanged?.();
  }

  /**
   * The watchdog of one execution: an execution that ended without a final
   * status (it threw, which it should never do) is ended `error` here. One
   * whose end could not be recorded at all has its lease dropped: it lapses,
   * and a sweep requeues the run.
   */
  private async watch(run: ExecutableRun, lease: RunLease): Promise<void> {
    let ending: RunEnding;
    try {
      ending = await executeRun(run, lease, this.deps);
    } catch (error) {
      this.log.error({ err: error, run_id: run.run_id }, "a run's execution ended without recording its end");
      const notice = await endInError(run, lease, runError(error), this.deps);
      if (notice && notice !== "lost") this.deps.broker.end(run.run_id, notice);
      ending = notice ? "ended" : "unrecorded";
    }
    if (ending === "unrecorded")
      this.log.error({ run_id: run.run_id }, "run left unrecorded: a sweep will requeue it once its lease lapsed");
  }

  /** Another attempt holds these runs now: their executions here stop without recording anything. */
  private leasesLost(runIds: string[]): void {
    for (const runId of runIds) {
      if (!this.executing.has(runId)) continue;
      this.log.warn({ run_id: runId }, "lost the lease of an executing run: stopping it");
      this.deps.control.abort(runId, "lease_lost");
    }
  }

  /** Wakes up when a delayed run becomes available (keeps the earliest such time). */
  private scheduleAt(at: number): void {
    if (this.stopped || (this.delayTimer && this.delayedUntil <= at)) return;
    clearTimeout(this.delayTimer);
    this.delayedUntil = at;
    this.delayTimer = setTimeout(
      () => {
        this.delayTimer = undefined;
        this.wake();
        void this.scheduleNextDelayed();
      },
      Math.max(0, at - Date.now()) + 1,
    );
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

  /**
   * Requeues the running runs nobody executes: lease lapsed (or no owner), or
   * owned by a process of this host that is gone. Never the runs executing
   * here. Every worker wakes up to claim them.
   */
  private async sweep(): Promise<void> {
    try {
      const deadOwners = await this.deadLocalOwners();
      const requeued = await this.runs.requeueExpired({ all: false, deadOwners, except: [...this.executing.keys()] });
      if (requeued === 0) return;
      this.log.warn({ requeued, dead_owners: deadOwners }, "requeued runs nobody executes any more");
      this.deps.broker.wakeWorkers();
    } catch (err) {
      this.log.error({ err }, "sweeping for runs nobody executes failed");
    }
  }
}
