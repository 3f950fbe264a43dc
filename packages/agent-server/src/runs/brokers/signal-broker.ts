import { randomUUID } from "node:crypto";
import type { Logger } from "../../logger.js";
import type { CancelAction, RunRepository, StoredEvent } from "../../storage/types.js";
import type { RunBroker, RunEndNotice, RunObserver, RunSubscription } from "./broker.js";
import { InProcessBroker } from "./in-process-broker.js";
import { LogFollowers } from "./log-followers.js";
import { MessageReader, SIGNAL_MESSAGES, type SignalMessage } from "./messages.js";

/** At most one "events flushed" notice per run this often (the event writer flushes every 25 ms). */
const FLUSH_NOTICE_MS = 30;

/** What a transport hands the broker. */
export interface SignalHandlers {
  /** A payload some process sent (this one included: the broker recognizes its own). */
  receive(payload: string): void;
  /** Payloads may have been lost (a dropped connection, a stalled reader): the broker catches up from the database. */
  lost(): void;
}

/**
 * How signals travel between the processes sharing a database: every
 * process receives every payload, in the order each sender sent them, with
 * no replay of what was sent before it started.
 */
export interface SignalTransport {
  /** Starts receiving; resolves once payloads sent from now on will be delivered. */
  start(handlers: SignalHandlers): Promise<void>;
  /** Fire and forget: failures are the transport's to log. */
  send(payload: string): void;
  close(): Promise<void>;
}

/** Small on purpose (NOTIFY payloads stop at 8000 bytes): events and outputs stay in the database. */
type Message = SignalMessage;

/**
 * The broker across processes that share a database but no Redis (the slower
 * mode). Signals (wake-ups, cancellations, run starts and ends, "events
 * flushed") go through a transport; events never do: the executing process
 * says when a batch reached `run_events`, and processes following the run
 * read the log from where they stopped. Followers are thus ~30-60 ms behind
 * the run, and subscribing replays nothing already logged (followers read the
 * log themselves, as followRun does). Messages this process sent itself are
 * delivered locally.
 */
export class SignalBroker implements RunBroker {
  private readonly local = new InProcessBroker();
  private readonly origin = randomUUID();
  private readonly followers: LogFollowers;
  private readonly reader: MessageReader;
  /** Runs whose last "flushed" notice went out less than FLUSH_NOTICE_MS ago, and whether another one is due. */
  private readonly cooldowns = new Map<string, { again: boolean; timer: NodeJS.Timeout }>();
  private closed = false;

  constructor(
    private readonly transport: SignalTransport,
    private readonly runs: RunRepository,
    private readonly logger?: Logger,
  ) {
    this.followers = new LogFollowers(runs, this.local, logger);
    this.reader = new MessageReader(logger);
  }

  /** Starts receiving other processes' signals. */
  async listen(): Promise<void> {
    await this.transport.start({ receive: (payload) => this.receive(payload), lost: () => this.resync() });
  }

  begin(runId: string, threadId: string): void {
    this.local.begin(runId, threadId);
    this.send({ o: this.origin, t: "start", r: runId, th: threadId });
  }

  /** Live for this process only: other processes read the log once `logged` tells them. */
  publish(runId: string, event: StoredEvent): void {
    this.local.publish(runId, event);
  }

  logged(runId: string): void {
    // Followers in this process may hold live events after a gap until the log has them.
    this.local.deliverLogged(runId);
    const cooling = this.cooldowns.get(runId);
    if (cooling)
      cooling.again = true; // sent when the cooldown ends, so the latest batch is announced too
    else this.announceFlushed(runId);
  }

  end(runId: string, notice: RunEndNotice): void {
    clearTimeout(this.cooldowns.get(runId)?.timer); // the end notice makes readers take the rest
    this.cooldowns.delete(runId);
    this.local.end(runId, notice);
    this.send({ o: this.origin, t: "end", r: runId, s: notice.status });
  }

  async subscribe(runId: string, observer: RunObserver): Promise<RunSubscription> {
    const subscription = this.local.subscribeSync(runId, observer);
    const unsubscribe = () => {
      subscription.unsubscribe();
      if (!this.local.hasObservers(runId)) this.followers.forget(runId);
    };
    if (subscription.active) return { active: true, unsubscribe };
    // Subscribed before reading the row: a run it shows running ends with a notice received after this point.
    const [run] = await Promise.all([this.runs.get(runId), this.followers.follow(runId)]);
    return { active: run?.status === "running", unsubscribe };
  }

  async lastSeq(runId: string): Promise<number> {
    return Math.max(await this.local.lastSeq(runId), await this.runs.lastEventSeq(runId));
  }

  executingLastSeq(runId: string): number | undefined {
    return this.local.executingLastSeq(runId);
  }

  watchThread(threadId: string, onRunStart: (runId: string) => void): Promise<() => void> {
    return this.local.watchThread(threadId, onRunStart);
  }

  wakeWorkers(availableAt?: number): void {
    this.local.wakeWorkers(availableAt);
    this.send({ o: this.origin, t: "wake", at: availableAt });
  }

  onWake(handler: (availableAt?: number) => void): void {
    this.local.onWake(handler);
  }

  cancel(runId: string, action: CancelAction): void {
    this.local.cancel(runId, action);
    this.send({ o: this.origin, t: "cancel", r: runId, why: action });
  }

  onCancel(handler: (runId: string, action: CancelAction) => void): void {
    this.local.onCancel(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.cooldowns.values()) clearTimeout(timer);
    this.cooldowns.clear();
    await this.local.close();
    await this.transport.close();
  }

  private announceFlushed(runId: string): void {
    this.send({ o: this.origin, t: "flushed", r: runId });
    const cooling = {
      again: false,
      timer: setTimeout(() => {
        this.cooldowns.delete(runId);
        if (cooling.again) this.announceFlushed(runId);
      }, FLUSH_NOTICE_MS),
    };
    this.cooldowns.set(runId, cooling);
  }

  private send(message: Message): void {
    if (!this.closed) this.transport.send(JSON.stringify(message));
  }

  /** Signals were lost: a run may have been created, and followed runs may have logged events or ended meanwhile. */
  private resync(): void {
    if (this.closed) return;
    this.local.wakeWorkers();
    this.followers.resync();
  }

  /** Whatever the payload holds, nothing throws back into the transport. */
  private receive(payload: string): void {
    try {
      this.dispatch(payload);
    } catch (err) {
      this.logger?.error({ err }, "handling a broker signal failed");
    }
  }

  private dispatch(payload: string): void {
    const message = this.reader.read(SIGNAL_MESSAGES, payload, "signals");
    if (!message || message.o === this.origin) return;
    switch (message.t) {
      case "wake":
        this.local.wakeWorkers(message.at);
        return;
      case "cancel":
        this.local.cancel(message.r, message.why);
        return;
      case "start":
        this.local.runStarted(message.r, message.th);
        return;
      case "flushed":
        this.followers.flushed(message.r);
        return;
      case "end":
        // A stopping process put the run back in the queue: it is not over, followers keep reading
        // its log, which the process that resumes it extends.
        if (message.s === "running") {
          this.followers.flushed(message.r);
          return;
        }
        this.followers.ended(message.r, message.s);
        return;
    }
  }
}
