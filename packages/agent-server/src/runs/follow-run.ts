import type { RunRepository, RunStatus, StoredEvent } from "../storage/types.js";
import { AsyncQueue } from "./async-queue.js";
import type { RunBroker } from "./broker.js";

export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(["success", "error", "timeout", "interrupted"]);

/**
 * The events of a run after `afterSeq`: what the log holds, then live events
 * until the run ends, each exactly once and in order. Subscribes at once (so a
 * run created right after is followed from its first event); the caller must
 * iterate the generator to the end or `return()` it. Ends early when `signal`
 * aborts (the client went away).
 */
export async function followRun(
  runId: string,
  afterSeq: number,
  deps: { runs: RunRepository; live: RunBroker },
  signal?: AbortSignal,
): Promise<AsyncGenerator<StoredEvent>> {
  const queue = new AsyncQueue<StoredEvent>();
  const subscription = await deps.live.subscribe(runId, { onEvent: (event) => queue.push(event), onEnd: () => queue.close() });
  const stop = () => queue.close();
  signal?.addEventListener("abort", stop, { once: true });

  async function* events(): AsyncGenerator<StoredEvent> {
    try {
      let last = afterSeq;
      for (const event of await deps.runs.readEvents(runId, last)) {
        yield event;
        last = event.seq;
      }
      if (!subscription.active && !queue.isClosed()) {
        const run = await deps.runs.get(runId);
        if (!run || TERMINAL_STATUSES.has(run.status)) {
          // The run may have ended while the log was read: take what was flushed since.
          for (const event of await deps.runs.readEvents(runId, last)) yield event;
          return;
        }
      }
      for await (const event of queue.drain()) {
        if (event.seq <= last) continue;
        if (event.seq > last + 1) {
          // Live delivery skipped events (a broker outage, say): the log has them.
          for (const logged of await deps.runs.readEvents(runId, last)) {
            if (logged.seq >= event.seq) break;
            yield logged;
          }
        }
        yield event;
        last = event.seq;
      }
      // The run ended: the log holds every event it produced, live delivery or not.
      for (const logged of await deps.runs.readEvents(runId, last)) yield logged;
    } finally {
      signal?.removeEventListener("abort", stop);
      subscription.unsubscribe();
    }
  }
  return events();
}
