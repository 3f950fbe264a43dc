import type { RunStatus, StoredEvent } from "../storage/types.js";

/** How a run ended, as told to whoever waits on it (the run row may be gone: stateless runs, rollbacks). */
export interface RunEndNotice {
  status: RunStatus;
  output: unknown;
}

export interface LiveStreamListener {
  onEvent(event: StoredEvent): void;
  /** The run ended: no event follows. */
  onEnd(notice: RunEndNotice): void;
}

interface LiveStream {
  /** Every event of the current attempt, kept while the run is active so late joiners catch up from memory. */
  events: StoredEvent[];
  active: boolean;
}

/**
 * Fan-out of the events of runs executing in this process. The persisted log
 * stays the source of truth; this only saves readers of an active run a trip
 * to the database and delivers events the moment they are produced.
 */
export class LiveStreams {
  private readonly streams = new Map<string, LiveStream>();
  private readonly listeners = new Map<string, Set<LiveStreamListener>>();
  private readonly threadWatchers = new Map<string, Set<(runId: string) => void>>();

  begin(runId: string, threadId: string): void {
    this.streams.set(runId, { events: [], active: true });
    for (const watcher of this.threadWatchers.get(threadId) ?? []) watcher(runId);
  }

  /** Calls `onRunStart` whenever a run of the thread starts executing here. */
  watchThread(threadId: string, onRunStart: (runId: string) => void): () => void {
    let set = this.threadWatchers.get(threadId);
    if (!set) this.threadWatchers.set(threadId, (set = new Set()));
    set.add(onRunStart);
    return () => {
      set.delete(onRunStart);
      if (set.size === 0) this.threadWatchers.delete(threadId);
    };
  }

  publish(runId: string, event: StoredEvent): void {
    this.streams.get(runId)?.events.push(event);
    for (const listener of this.listeners.get(runId) ?? []) listener.onEvent(event);
  }

  /** The latest sequence number published for an active run (-1 when none). */
  lastSeq(runId: string): number {
    return this.streams.get(runId)?.events.at(-1)?.seq ?? -1;
  }

  end(runId: string, notice: RunEndNotice): void {
    this.streams.delete(runId);
    for (const listener of this.listeners.get(runId) ?? []) listener.onEnd(notice);
  }

  /**
   * Listens to a run's events; replays what the active attempt already
   * produced. Works for a run that has not started yet too.
   */
  subscribe(runId: string, listener: LiveStreamListener): { active: boolean; unsubscribe: () => void } {
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    const stream = this.streams.get(runId);
    for (const event of stream?.events ?? []) listener.onEvent(event);
    return {
      active: stream?.active ?? false,
      unsubscribe: () => {
        set.delete(listener);
        if (set.size === 0) this.listeners.delete(runId);
      },
    };
  }
}
