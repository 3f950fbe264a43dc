import { setImmediate } from "node:timers/promises";

/** Longest stretch a run may keep the event loop to itself. */
const MAX_BUSY_MS = 2;

/**
 * A graph that streams from CPU-bound async code runs as one long chain of
 * promise continuations. Node only uncorks sockets (process.nextTick) once the
 * microtask queue drains, so without a pause every SSE event would wait for the
 * run's end. Yielding a macrotask every few milliseconds lets events out as
 * they are produced and keeps other requests served.
 */
export class EventLoopPacer {
  private lastYield = performance.now();

  async maybeYield(): Promise<void> {
    if (performance.now() - this.lastYield >= MAX_BUSY_MS) await this.yieldNow();
  }

  async yieldNow(): Promise<void> {
    await setImmediate();
    this.lastYield = performance.now();
  }
}
