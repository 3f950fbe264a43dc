import type { StoredEvent } from "../../storage/types.js";

/**
 * Puts a run's events from two sources, live delivery and the persisted log,
 * into one stream where each event comes once and in order, and no event is
 * skipped while it may still reach the log.
 *
 * A live event past a gap (live delivery skipped some: a broker outage) is
 * held, not handed on: the skipped events are published live before they are
 * written to the log (in batches, tens of ms later), so a read of the log made
 * right then may not hold them yet. The gap closes once the log holds
 * something at or past a held event: the log is written in sequence order, so
 * it then holds everything before it that it ever will.
 */
export class EventSequencer {
  private readonly held = new Map<number, StoredEvent>();

  /** `last`: the last event handed on (the client's Last-Event-ID). */
  constructor(public last: number) {}

  /** Live events wait behind a gap only the log can fill. */
  get waiting(): boolean {
    return this.held.size > 0;
  }

  /** A live event comes right after the last one with nothing held (the usual case): it can be handed on as it is. */
  isNext(event: StoredEvent): boolean {
    return event.seq === this.last + 1 && this.held.size === 0;
  }

  /** Takes a live event if it `isNext`: hand it on. */
  takeNext(event: StoredEvent): boolean {
    if (!this.isNext(event)) return false;
    this.last = event.seq;
    return true;
  }

  /** A live event: what can be handed on now. Returns `gap: true` when it opens a gap. */
  live(event: StoredEvent): { ready: StoredEvent[]; gap: boolean } {
    if (event.seq <= this.last || this.held.has(event.seq)) return { ready: [], gap: false };
    if (event.seq !== this.last + 1) {
      const opened = !this.waiting;
      this.held.set(event.seq, event);
      return { ready: [], gap: opened };
    }
    this.last = event.seq;
    return { ready: [event, ...this.contiguous()], gap: false };
  }

  /** What the log holds after `last`, in order: everything up to its last event can be handed on. */
  logged(events: StoredEvent[]): StoredEvent[] {
    const through = events.at(-1)?.seq ?? this.last;
    // Held events the log lacks (an attempt that crashed before logging them) keep their place.
    const merged = new Map<number, StoredEvent>();
    for (const [seq, event] of this.held) {
      if (seq <= through) {
        merged.set(seq, event);
        this.held.delete(seq);
      }
    }
    for (const event of events) merged.set(event.seq, event);
    const ready = this.inOrder(merged);
    return [...ready, ...this.contiguous()];
  }

  /** The run ended and its log was read to the end: what is still held (never logged), in order. */
  rest(): StoredEvent[] {
    const ready = this.inOrder(this.held);
    this.held.clear();
    return ready;
  }

  private inOrder(events: Map<number, StoredEvent>): StoredEvent[] {
    const ready: StoredEvent[] = [];
    for (const seq of [...events.keys()].sort((a, b) => a - b)) {
      if (seq <= this.last) continue;
      ready.push(events.get(seq)!);
      this.last = seq;
    }
    return ready;
  }

  private contiguous(): StoredEvent[] {
    const ready: StoredEvent[] = [];
    for (let next = this.held.get(this.last + 1); next; next = this.held.get(this.last + 1)) {
      this.held.delete(next.seq);
      this.last = next.seq;
      ready.push(next);
    }
    return ready;
  }
}
