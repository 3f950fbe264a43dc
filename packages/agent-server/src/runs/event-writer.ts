import type { RunRepository, StoredEvent } from "../storage/types.js";
import type { RunBroker, RunEndNotice } from "./broker.js";

/** Event ids of one attempt stay below the next attempt's first id. */
const ATTEMPT_SEQ_SPAN = 1_000_000_000;

/** How long events may wait before they are written to the log in one batch. */
const FLUSH_INTERVAL_MS = 25;

/**
 * Writes one run attempt's events: numbered, serialized once, delivered live
 * at once and appended to the persisted log in small batches.
 */
export class RunEventWriter {
  private pending: StoredEvent[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly runId: string,
    private nextSeq: number,
    private readonly runs: RunRepository,
    private readonly live: RunBroker,
    private readonly persist: boolean,
  ) {}

  /**
   * Numbers attempt k from (k-1)·10⁹ (or after what earlier attempts logged):
   * events of a crashed attempt may have reached clients without reaching the
   * log, and an id a client has seen must never name another event. A run
   * deleted when it ends (stateless) is not logged: its log would die with it.
   */
  static async open(
    run: { run_id: string; thread_id: string; attempt: number; persistEvents: boolean },
    runs: RunRepository,
    live: RunBroker,
  ): Promise<RunEventWriter> {
    live.begin(run.run_id, run.thread_id);
    const attemptBase = (run.attempt - 1) * ATTEMPT_SEQ_SPAN;
    const firstSeq = run.persistEvents ? Math.max(attemptBase, (await runs.lastEventSeq(run.run_id)) + 1) : attemptBase;
    return new RunEventWriter(run.run_id, firstSeq, runs, live, run.persistEvents);
  }

  emit(event: string, data: unknown): void {
    const stored = { seq: this.nextSeq++, event, data: JSON.stringify(data) };
    this.live.publish(this.runId, stored);
    if (!this.persist) return;
    this.pending.push(stored);
    this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
  }

  /** Writes every pending event; resolves once they are in the log. */
  flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) {
      this.flushing = this.flushing.then(async () => {
        await this.runs.appendEvents(this.runId, batch);
        this.live.logged?.(this.runId);
      });
    }
    return this.flushing;
  }

  /** Tells live readers the stream is over (after the final flush and the run's end are recorded). */
  endLive(notice: RunEndNotice): void {
    this.live.end(this.runId, notice);
  }
}
