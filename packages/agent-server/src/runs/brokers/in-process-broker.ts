import type { CancelAction, StoredEvent } from "../../storage/types.js";
import type { RunBroker, RunEndNotice, RunObserver, RunSubscription } from "./broker.js";
import { CALL_COST, PacedFanOut } from "./paced-fan-out.js";

interface LiveStream {
  /** Every event of the current attempt, kept while the run is active so late joiners catch up from memory. */
  events: StoredEvent[];
}

/** The broker of a single process: everything stays in memory. */
export class InProcessBroker implements RunBroker {
  private readonly streams = new Map<string, LiveStream>();
  private readonly observers = new Map<string, Set<RunObserver>>();
  private readonly threadWatchers = new Map<string, Set<(runId: string) => void>>();
  private wakeHandlers: ((availableAt?: number) => void)[] = [];
  private cancelHandlers: ((runId: string, action: CancelAction) => void)[] = [];
  private readonly fanOut = new PacedFanOut((runId) => this.observers.get(runId));

  begin(runId: string, threadId: string): void {
    this.streams.set(runId, { events: [] });
    this.runStarted(runId, threadId);
  }

  /** Tells the thread's watchers in this process that a run started. */
  runStarted(runId: string, threadId: string): void {
    for (const watcher of this.threadWatchers.get(threadId) ?? []) watcher(runId);
  }

  publish(runId: string, event: StoredEvent): void {
    this.streams.get(runId)?.events.push(event);
    this.deliver(runId, event);
  }

  /** Hands an event to this process's observers (also used for events of runs executing elsewhere). */
  deliver(runId: string, event: StoredEvent): void {
    this.fanOut.send(runId, (observer) => observer.onEvent(event));
  }

  /** Tells this process's observers that a batch of the run's events reached the log. */
  deliverLogged(runId: string): void {
    this.fanOut.send(runId, (observer) => observer.onLogged?.());
  }

  /**
   * Tells this process's observers that live delivery may have skipped the
   * run's events and end; with `executorDied`, the attempt executing here is
   * gone too: its events after the last logged batch are lost, so later
   * joiners read the log instead of its memory.
   */
  deliverLost(runId: string, executorDied = false): void {
    if (executorDied) this.streams.delete(runId);
    this.fanOut.send(runId, (observer) => observer.onLost?.());
  }

  end(runId: string, notice: RunEndNotice): void {
    const lastSeq = this.executingLastSeq(runId);
    this.streams.delete(runId);
    const told = lastSeq === undefined ? notice : { ...notice, lastSeq };
    this.fanOut.send(runId, (observer) => observer.onEnd(told), CALL_COST.end);
  }

  async subscribe(runId: string, observer: RunObserver): Promise<RunSubscription> {
    return this.subscribeSync(runId, observer);
  }

  subscribeSync(runId: string, observer: RunObserver): RunSubscription {
    let set = this.observers.get(runId);
    if (!set) this.observers.set(runId, (set = new Set()));
    set.add(observer);
    const stream = this.streams.get(runId);
    for (const event of stream?.events ?? []) observer.onEvent(event);
    return {
      active: stream !== undefined,
      replayedAll: stream !== undefined,
      unsubscribe: () => {
        set.delete(observer);
        if (set.size === 0) this.observers.delete(runId);
      },
    };
  }

  hasObservers(runId: string): boolean {
    return this.observers.has(runId);
  }

  /** The runs this process's observers follow. */
  observedRuns(): string[] {
    return [...this.observers.keys()];
  }

  /** The run's current attempt executes in this process. */
  isExecuting(runId: string): boolean {
    return this.streams.has(runId);
  }

  async lastSeq(runId: string): Promise<number> {
    return this.executingLastSeq(runId) ?? -1;
  }

  executingLastSeq(runId: string): number | undefined {
    const stream = this.streams.get(runId);
    return stream && (stream.events.at(-1)?.seq ?? -1);
  }

  async watchThread(threadId: string, onRunStart: (runId: string) => void): Promise<() => void> {
    let set = this.threadWatchers.get(threadId);
    if (!set) this.threadWatchers.set(threadId, (set = new Set()));
    set.add(onRunStart);
    return () => {
      set.delete(onRunStart);
      if (set.size === 0) this.threadWatchers.delete(threadId);
    };
  }

  hasThreadWatchers(threadId: string): boolean {
    return this.threadWatchers.has(threadId);
  }

  wakeWorkers(availableAt?: number): void {
    for (const handler of this.wakeHandlers) handler(availableAt);
  }

  onWake(handler: (availableAt?: number) => void): void {
    this.wakeHandlers.push(handler);
  }

  cancel(runId: string, action: CancelAction): void {
    for (const handler of this.cancelHandlers) handler(runId, action);
  }

  onCancel(handler: (runId: string, action: CancelAction) => void): void {
    this.cancelHandlers.push(handler);
  }

  async close(): Promise<void> {
    this.wakeHandlers = [];
    this.cancelHandlers = [];
  }
}
