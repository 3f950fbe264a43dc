import type { RunRepository, StoredEvent } from "../storage/types.js";
import type { LiveStreams, RunEndNotice } from "./live-streams.js";

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
    private readonly live: LiveStreams,
  ) {}

  /** Continues numbering after what earlier attempts of the run logged. */
  static async open(runId: string, threadId: string, runs: RunRepository, live: LiveStreams): Promise<RunEventWriter> {
    live.begin(runId, threadId);
    return new RunEventWriter(runId, (await runs.lastEventSeq(runId)) + 1, runs, live);
  }

  emit(event: string, data: unknown): void {
    const stored = { seq: this.nextSeq++, event, data: JSON.stringify(data) };
    this.live.publish(this.runId, stored);
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
      this.flushing = this.flushing.then(() => this.runs.appendEvents(this.runId, batch));
    }
    return this.flushing;
  }

  /** Tells live readers the stream is over (after the final flush and the run's end are recorded). */
  endLive(notice: RunEndNotice): void {
    this.live.end(this.runId, notice);
  }
}
