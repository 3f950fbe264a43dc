import type { CancelAction, StoredEvent } from "../../storage/types.js";
import type { RunBroker, RunEndNotice, RunListener, RunSubscription } from "./broker.js";

interface LiveStream {
  /** Every event of the current attempt, kept while the run is active so late joiners catch up from memory. */
  events: StoredEvent[];
}

/** The broker of a single process: everything stays in memory. */
export class InProcessBroker implements RunBroker {
  private readonly streams = new Map<string, LiveStream>();
  private readonly listeners = new Map<string, Set<RunListener>>();
  private readonly threadWatchers = new Map<string, Set<(runId: string) => void>>();
  private wakeHandlers: ((availableAt?: number) => void)[] = [];
  private cancelHandlers: ((runId: string, action: CancelAction) => void)[] = [];

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

  /** Hands an event to this process's listeners (also used for events of runs executing elsewhere). */
  deliver(runId: string, event: StoredEvent): void {
    for (const listener of this.listeners.get(runId) ?? []) listener.onEvent(event);
  }

  /** Tells this process's listeners that a batch of the run's events reached the log. */
  deliverLogged(runId: string): void {
    for (const listener of this.listeners.get(runId) ?? []) listener.onLogged?.();
  }

  /** Tells this process's listeners that live delivery may have skipped the run's events and end. */
  deliverLost(runId: string): void {
    for (const listener of this.listeners.get(runId) ?? []) listener.onLost?.();
  }

  end(runId: string, notice: RunEndNotice): void {
    this.streams.delete(runId);
    for (const listener of this.listeners.get(runId) ?? []) listener.onEnd(notice);
  }

  async subscribe(runId: string, listener: RunListener): Promise<RunSubscription> {
    return this.subscribeSync(runId, listener);
  }

  subscribeSync(runId: string, listener: RunListener): RunSubscription & { firstListener: boolean } {
    let set = this.listeners.get(runId);
    const firstListener = !set;
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    const stream = this.streams.get(runId);
    for (const event of stream?.events ?? []) listener.onEvent(event);
    return {
      active: stream !== undefined,
      firstListener,
      unsubscribe: () => {
        set.delete(listener);
        if (set.size === 0) this.listeners.delete(runId);
      },
    };
  }

  hasListeners(runId: string): boolean {
    return this.listeners.has(runId);
  }

  /** The runs this process's listeners follow. */
  listenedRuns(): string[] {
    return [...this.listeners.keys()];
  }

  /** The run's current attempt executes in this process. */
  isExecuting(runId: string): boolean {
    return this.streams.has(runId);
  }

  async lastSeq(runId: string): Promise<number> {
    return this.streams.get(runId)?.events.at(-1)?.seq ?? -1;
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
