import type { RunLease, RunRepository, StoredEvent } from "../../storage/types.js";
import type { RunBroker } from "../brokers/broker.js";

/** The stored name of protocol v2 events (their data is the whole wire event). */
export const PROTOCOL_EVENT = "protocol";

/** Event ids of one attempt stay below the next attempt's first id. */
const ATTEMPT_SEQ_SPAN = 1_000_000_000;

/**
 * A retried attempt of a protocol v2 run numbers on from this far past what
 * the thread logged: the crashed attempt may have published events live that
 * never reached the log, and a seq a client has seen must never name another
 * event.
 */
const RETRY_SEQ_SKIP = 100_000;

/**
 * How long a run's events may wait before they are written to its log in one batch. Briefly when followers in other
 * processes read the events from the log (`logFollowed`: the brokers of signal mode). Otherwise every follower gets
 * them live and the log serves those that join late or lost live delivery, and the run's next attempt: a run shorter
 * than `live` logs its events with its end, in one write.
 */
export const EVENT_LOG_INTERVAL_MS = { logFollowed: 25, live: 200 } as const;

/** What the writer tells its run about the log. */
export interface EventLogHooks {
  /** A batch could not be written: the run's stream is no longer complete in the log, the run must end. */
  failed(error: Error): void;
  /** The log refused a batch because another attempt holds the run now: this one must stop. */
  leaseLost(): void;
}

export interface WriterRun {
  run_id: string;
  thread_id: string;
  attempt: number;
  persistEvents: boolean;
  /** The claim the run's events are logged under (a worker that lost it logs nothing more). */
  lease?: RunLease;
  /** A protocol v2 run: its events are numbered in its thread's sequence, which keeps rising across runs. */
  threadSequence?: boolean;
  /** How long its events may wait for the log (EVENT_LOG_INTERVAL_MS.logFollowed when not given). */
  logIntervalMs?: number;
  /** Its log holds nothing yet (a run its creation claimed here, in its first attempt): the log's last id is not read. */
  logEmpty?: boolean;
}

/**
 * Writes one run attempt's events: numbered, serialized once, delivered live
 * at once and appended to the persisted log in small batches. Writing never
 * rejects: a batch that failed stays pending (later flushes retry it, in
 * order) and the failure is reported once through the hooks.
 */
export class RunEventWriter {
  private pending: StoredEvent[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** The first failure to write the log, if any. */
  failure: Error | undefined;
  /** Another attempt holds the run: nothing is published or logged any more. */
  lost = false;
  /** The graph named by a protocol v2 run's root lifecycle, for its failure. */
  private rootGraph = "root";

  private constructor(
    private readonly run: WriterRun,
    private nextSeq: number,
    private readonly runs: RunRepository,
    private readonly broker: RunBroker,
    private readonly hooks: EventLogHooks,
  ) {}

  /**
   * Numbers attempt k from (k-1)·10⁹ (or after what earlier attempts logged):
   * events of a crashed attempt may have reached clients without reaching the
   * log, and an id a client has seen must never name another event. A run
   * deleted when it ends (stateless) is not logged: its log would die with it.
   */
  static async open(run: WriterRun, runs: RunRepository, broker: RunBroker, hooks: EventLogHooks): Promise<RunEventWriter> {
    broker.begin(run.run_id, run.thread_id);
    if (run.threadSequence) {
      const logged = await runs.threadEventSeq(run.thread_id);
      return new RunEventWriter(run, logged + 1 + (run.attempt > 1 ? RETRY_SEQ_SKIP : 0), runs, broker, hooks);
    }
    const attemptBase = (run.attempt - 1) * ATTEMPT_SEQ_SPAN;
    const logged = run.persistEvents && !run.logEmpty;
    const firstSeq = logged ? Math.max(attemptBase, (await lastSeqOrNone(runs, run.run_id)) + 1) : attemptBase;
    return new RunEventWriter(run, firstSeq, runs, broker, hooks);
  }

  /** Emits a protocol v2 event: the stored data is the whole wire event, its `seq` the thread's. */
  emitProtocol(method: string, params: { namespace: string[]; timestamp: number; data: unknown }): void {
    if (this.lost) return;
    if (method === "lifecycle" && params.namespace.length === 0) {
      this.rootGraph = (params.data as { graph_name?: string }).graph_name ?? this.rootGraph;
    }
    const seq = this.nextSeq;
    this.emitSerialized(
      PROTOCOL_EVENT,
      `{"type":"event","event_id":"${seq}","seq":${seq},"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`,
    );
  }

  /**
   * The run's failure as its stream's last event: `error`, or for a protocol
   * v2 run its root's `failed` lifecycle.
   */
  emitError(error: { error: string; message: string }): void {
    if (!this.run.threadSequence) {
      this.emit("error", error);
      return;
    }
    const data = { event: "failed", graph_name: this.rootGraph, error: error.message };
    this.emitProtocol("lifecycle", { namespace: [], timestamp: Date.now(), data });
  }

  emit(event: string, data: unknown): void {
    if (this.lost) return;
    this.emitSerialized(event, JSON.stringify(data));
  }

  private emitSerialized(event: string, data: string): void {
    const stored = { seq: this.nextSeq++, event, data };
    this.broker.publish(this.run.run_id, stored);
    if (!this.run.persistEvents) return;
    this.pending.push(stored);
    this.flushTimer ??= setTimeout(() => void this.flush(), this.run.logIntervalMs ?? EVENT_LOG_INTERVAL_MS.logFollowed);
  }

  /** Writes every pending event; resolves once they are in the log, or once writing them failed (see `failure`). */
  flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.length > 0) this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /**
   * The events not in the log yet once every batch under way has landed, for
   * the run's end to log in its own transaction (then `loggedWithEnd`); they
   * stay pending meanwhile, for a flush should the end not be recorded.
   * Undefined when the log failed or another attempt holds the run.
   */
  async unloggedAtEnd(): Promise<StoredEvent[] | undefined> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await this.flushing;
    if (this.failure || this.lost) return undefined;
    return [...this.pending];
  }

  /** The run's end logged what `unloggedAtEnd` gave it. */
  loggedWithEnd(): void {
    this.pending = [];
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0 || this.lost) return;
    try {
      const thread = this.run.threadSequence ? this.run.thread_id : undefined;
      if (!(await this.runs.appendEvents(this.run.run_id, batch, this.run.lease, thread))) {
        this.lost = true;
        this.hooks.leaseLost();
        return;
      }
      this.broker.logged?.(this.run.run_id);
    } catch (error) {
      this.pending = [...batch, ...this.pending];
      if (this.failure) return;
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.hooks.failed(this.failure);
    }
  }
}

/** Tries (and waits) before giving up on reading the log's last id: a dropped connection is back in moments. */
const LAST_SEQ_RETRY_MS = [100, 300, 900];

/**
 * The last id in the run's log, or -1 when the log cannot be read now: each
 * attempt numbers its events from its own base, above any earlier attempt's,
 * so the writer can open (and the run end with its `error` event in the
 * stream) even while the database is briefly unreachable.
 */
async function lastSeqOrNone(runs: RunRepository, runId: string): Promise<number> {
  for (const delay of LAST_SEQ_RETRY_MS) {
    try {
      return await runs.lastEventSeq(runId);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  return runs.lastEventSeq(runId).catch(() => -1);
}
