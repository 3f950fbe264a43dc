import type { CancelAction, RunStatus, StoredEvent } from "../../storage/types.js";

/** How a run ended, as told to whoever waits on it (the run row may be gone: stateless runs, rollbacks). */
export interface RunEndNotice {
  status: RunStatus;
  output: unknown;
  /**
   * The last sequence number of the attempt that ended, told only by a broker
   * that held every event of that attempt in memory and delivered each to its
   * observers: a follower that handed that one on has them all, and needs no
   * last read of the log.
   */
  lastSeq?: number;
}

/** What observes a run through its broker: its events, its end, and notices about its log. */
export interface RunObserver {
  onEvent(event: StoredEvent): void;
  /** The run ended: no event follows. */
  onEnd(notice: RunEndNotice): void;
  /**
   * A batch of the run's events reached the persisted log (from brokers whose
   * live delivery can skip events, for an observer waiting for the log to fill
   * a gap).
   */
  onLogged?(): void;
  /**
   * Live delivery may have skipped events and the end (the broker's
   * connection dropped): the observer should check the log and the run.
   */
  onLost?(): void;
}

export interface RunSubscription {
  /** The run is executing now (somewhere), so its events will keep coming. */
  active: boolean;
  /**
   * The subscription began with every event of the run's current attempt, in
   * order, from the memory of the process executing it: a follower whose
   * cursor that replay reaches needs no read of the log to start.
   */
  replayedAll?: boolean;
  /** Resolves once what the broker replays after subscribing (a buffer elsewhere) has reached the observer. */
  replayed?: Promise<void>;
  /**
   * For a subscription to a run being created (`creating`): the creation is
   * over, and the run executes in this process (`executingHere`) or may
   * execute anywhere. Called once, unless the creation failed.
   */
  created?(executingHere: boolean): void;
  unsubscribe(): void;
}

export interface SubscribeOptions {
  /**
   * This process is about to create the run (its id is new: nobody else can
   * have started it). A broker across processes may then wait for
   * `RunSubscription.created` before it listens beyond this process, and not
   * listen at all for a run that executes here.
   */
  creating?: boolean;
}

/**
 * What crosses between the parts of Berth that create, execute and follow
 * runs: live events, end notices, worker wake-ups and cancellations. In one
 * process it is all in memory; across processes it goes through Redis, or
 * as signals (PostgreSQL LISTEN/NOTIFY, a shared SQLite table) and the event
 * log (slower). The
 * persisted event log stays the source of truth: a follower that missed a live
 * event catches up from it.
 */
export interface RunBroker {
  /** An attempt of a run starts executing here. */
  begin(runId: string, threadId: string): void;
  publish(runId: string, event: StoredEvent): void;
  /**
   * A batch of the run's events reached the persisted log (for a broker that
   * carries no events across processes: followers elsewhere read the log).
   */
  logged?(runId: string): void;
  end(runId: string, notice: RunEndNotice): void;
  /**
   * Listens to a run's events and end, replaying what its current attempt
   * already produced that the persisted log may not hold yet (followers read
   * the log themselves). Works for a run that has not started yet too.
   */
  subscribe(runId: string, observer: RunObserver, options?: SubscribeOptions): Promise<RunSubscription>;
  /** The latest sequence number produced by the run's current attempt (-1 when none). */
  lastSeq(runId: string): Promise<number>;
  /**
   * When the run's current attempt executes in this process: the sequence
   * number of its latest event (-1 before its first), from memory. Undefined
   * when it executes elsewhere or not at all.
   */
  executingLastSeq(runId: string): number | undefined;
  /** Calls `onRunStart` whenever a run of the thread starts executing. */
  watchThread(threadId: string, onRunStart: (runId: string) => void): Promise<() => void>;
  /** Workers may have something to claim (now, or at `availableAt`). */
  wakeWorkers(availableAt?: number): void;
  onWake(handler: (availableAt?: number) => void): void;
  /** Asks whichever process executes the run to abort it. */
  cancel(runId: string, action: CancelAction): void;
  onCancel(handler: (runId: string, action: CancelAction) => void): void;
  close(): Promise<void>;
}
