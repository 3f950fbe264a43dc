import type { RunObserver } from "./broker.js";

/** Observer calls one turn of the event loop makes before the rest wait for the next turn (in event deliveries). */
const CALLS_PER_TURN = 250;

/**
 * What a call costs against CALLS_PER_TURN: an event is a socket write; an end
 * finishes a subscriber's response (its stream's end, the request's hooks and
 * log line), about ten writes' worth.
 */
export const CALL_COST = { event: 1, end: 10 } as const;

/** One call (an event, an end...) still owed to the observers a run had when it was made. */
interface OwedCall {
  observers: RunObserver[];
  next: number;
  call: (observer: RunObserver) => void;
  cost: number;
}

/**
 * Hands a run's events and notices to its observers, at most CALLS_PER_TURN a
 * turn of the event loop: each call writes to a subscriber's socket, and
 * runs emitting at the same instant to ten thousand subscribers would
 * otherwise hold the thread for a tenth of a second, every other request
 * waiting. What does not fit waits for the next turn (after the poll phase
 * has served whatever arrived), in order: a run with calls owed queues its
 * later ones behind them, so each observer sees the run's calls in the order
 * they were made. An owed call goes to the observers the run had when it was
 * made that still observe it (one that subscribed since got it in its replay).
 */
export class PacedFanOut {
  private spent = 0;
  private turnScheduled = false;
  private readonly owed = new Map<string, OwedCall[]>();

  constructor(private readonly observersOf: (runId: string) => ReadonlySet<RunObserver> | undefined) {}

  send(runId: string, call: (observer: RunObserver) => void, cost: number = CALL_COST.event): void {
    const observers = this.observersOf(runId);
    if (!observers || observers.size === 0) return;
    const queue = this.owed.get(runId);
    if (!queue && this.spent + observers.size * cost <= CALLS_PER_TURN) {
      this.spent += observers.size * cost;
      this.scheduleTurn();
      for (const observer of observers) call(observer);
      return;
    }
    const owed: OwedCall = { observers: [...observers], next: 0, call, cost };
    if (queue) queue.push(owed);
    else this.owed.set(runId, [owed]);
    this.scheduleTurn();
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(this.turn);
  }

  private readonly turn = (): void => {
    this.turnScheduled = false;
    this.spent = 0;
    for (const [runId, queue] of this.owed) {
      while (queue.length > 0) {
        const owed = queue[0]!;
        while (owed.next < owed.observers.length) {
          if (this.spent >= CALLS_PER_TURN) {
            this.scheduleTurn();
            return;
          }
          const observer = owed.observers[owed.next++]!;
          if (!this.observersOf(runId)?.has(observer)) continue;
          this.spent += owed.cost;
          owed.call(observer);
        }
        queue.shift();
      }
      this.owed.delete(runId);
    }
  };
}
