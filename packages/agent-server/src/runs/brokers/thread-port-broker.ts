import type { CancelAction, StoredEvent } from "../../storage/types.js";
import type { RunBroker, RunEndNotice, RunObserver, RunSubscription } from "./broker.js";
import { InProcessBroker } from "./in-process-broker.js";

/**
 * The broker between a process's main thread (HTTP) and its execution thread
 * (the run worker, runs/execution/execution-thread.ts), over a MessagePort.
 * Unlike the brokers across processes it carries everything, events
 * included: both threads share one address space's worth of trust and
 * ordering, so followers on the main thread see events as live as in one
 * thread. Messages of one turn of the event loop cross in one postMessage.
 */

/** What the execution thread tells the main thread. */
export type FromExecution =
  | { t: "begin"; r: string; th: string }
  | { t: "event"; r: string; e: StoredEvent }
  | { t: "logged"; r: string }
  | { t: "end"; r: string; n: RunEndNotice };

/** What the main thread tells the execution thread. */
export type ToExecution = { t: "wake"; at?: number } | { t: "cancel"; r: string; why: CancelAction };

/**
 * Collects messages and posts them together, in order: those of one
 * microtask checkpoint, or with `perLoop` those of one turn of the event loop
 * (a postMessage costs more than the few events a microtask checkpoint holds).
 */
class Batcher<M> {
  private pending: M[] = [];
  private scheduled = false;

  constructor(
    private readonly flush: (messages: M[]) => void,
    private readonly perLoop = false,
  ) {}

  push(message: M): void {
    this.pending.push(message);
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.perLoop) setImmediate(() => this.send());
    else queueMicrotask(() => this.send());
  }

  send(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const messages = this.pending;
    this.pending = [];
    this.flush(messages);
  }
}

/** What both sides keep in this thread: observers, thread watchers, wake-up and cancel handlers. */
abstract class PortBroker<Out> implements RunBroker {
  protected readonly local = new InProcessBroker();
  protected readonly outbox: Batcher<Out>;

  constructor(post: (messages: Out[]) => void, perLoop = false) {
    this.outbox = new Batcher(post, perLoop);
  }

  abstract begin(runId: string, threadId: string): void;
  abstract publish(runId: string, event: StoredEvent): void;
  abstract logged(runId: string): void;
  abstract end(runId: string, notice: RunEndNotice): void;

  subscribe(runId: string, observer: RunObserver): Promise<RunSubscription> {
    return this.local.subscribe(runId, observer);
  }

  lastSeq(runId: string): Promise<number> {
    return this.local.lastSeq(runId);
  }

  executingLastSeq(runId: string): number | undefined {
    return this.local.executingLastSeq(runId);
  }

  watchThread(threadId: string, onRunStart: (runId: string) => void): Promise<() => void> {
    return this.local.watchThread(threadId, onRunStart);
  }

  wakeWorkers(availableAt?: number): void {
    this.local.wakeWorkers(availableAt);
  }

  onWake(handler: (availableAt?: number) => void): void {
    this.local.onWake(handler);
  }

  cancel(runId: string, action: CancelAction): void {
    this.local.cancel(runId, action);
  }

  onCancel(handler: (runId: string, action: CancelAction) => void): void {
    this.local.onCancel(handler);
  }

  /** Posts what is pending now. */
  flush(): void {
    this.outbox.send();
  }

  async close(): Promise<void> {
    this.flush();
    await this.local.close();
  }
}

/**
 * The execution thread's broker: what the worker and its runs produce goes
 * to the main thread; wake-ups and cancellations come from there. The
 * worker's own sweeps wake it here (nothing on the main thread claims runs).
 */
export class ExecutionSideBroker extends PortBroker<FromExecution> {
  /** `post` receives the messages of each turn of the event loop. */
  constructor(post: (messages: FromExecution[]) => void) {
    super(post, true);
  }

  /** Handles what the main thread sent. */
  receive(messages: ToExecution[]): void {
    for (const message of messages) {
      if (message.t === "wake") this.local.wakeWorkers(message.at);
      else this.local.cancel(message.r, message.why);
    }
  }

  // Runs are followed on the main thread only: nothing of theirs is kept here.
  begin(runId: string, threadId: string): void {
    this.outbox.push({ t: "begin", r: runId, th: threadId });
  }

  publish(runId: string, event: StoredEvent): void {
    this.outbox.push({ t: "event", r: runId, e: event });
  }

  logged(runId: string): void {
    this.outbox.push({ t: "logged", r: runId });
  }

  end(runId: string, notice: RunEndNotice): void {
    this.outbox.push({ t: "end", r: runId, n: notice });
  }
}

/**
 * The main thread's broker: runs execute in the execution thread, whose
 * events, starts and ends arrive here and reach this thread's observers as
 * an in-process broker's would (late joiners replay the current attempt from
 * memory); wake-ups and cancellations go there.
 */
export class MainSideBroker extends PortBroker<ToExecution> {
  private post: ((messages: ToExecution[]) => void) | undefined;
  /** Runs the execution thread began and did not end yet. */
  private readonly inFlight = new Set<string>();

  constructor() {
    super((messages) => this.post?.(messages));
  }

  /**
   * Where wake-ups and cancellations go from now on (a new execution thread after a crash). A thread attached gets a
   * wake-up: those of runs created while none was attached went nowhere.
   */
  attach(post: ((messages: ToExecution[]) => void) | undefined): void {
    this.post = post;
    if (post) this.outbox.push({ t: "wake" });
  }

  /** Handles what the execution thread sent. */
  receive(messages: FromExecution[]): void {
    for (const message of messages) {
      switch (message.t) {
        case "begin":
          this.inFlight.add(message.r);
          this.local.begin(message.r, message.th);
          break;
        case "event":
          this.local.publish(message.r, message.e);
          break;
        case "logged":
          this.local.deliverLogged(message.r);
          break;
        case "end":
          this.inFlight.delete(message.r);
          this.local.end(message.r, message.n);
          break;
      }
    }
  }

  /**
   * The execution thread died: the events of its runs after the last logged
   * batch are gone. Their followers check the log and the run (requeued, it
   * starts again in the next execution thread).
   */
  executionLost(): void {
    for (const runId of this.inFlight) this.local.deliverLost(runId, true);
    this.inFlight.clear();
  }

  begin(runId: string, threadId: string): void {
    this.local.begin(runId, threadId);
  }

  publish(runId: string, event: StoredEvent): void {
    this.local.publish(runId, event);
  }

  logged(runId: string): void {
    this.local.deliverLogged(runId);
  }

  end(runId: string, notice: RunEndNotice): void {
    this.local.end(runId, notice);
  }

  override wakeWorkers(availableAt?: number): void {
    super.wakeWorkers(availableAt);
    this.outbox.push({ t: "wake", at: availableAt });
  }

  override cancel(runId: string, action: CancelAction): void {
    super.cancel(runId, action);
    this.outbox.push({ t: "cancel", r: runId, why: action });
  }
}
