import { type RunRepository, type StoredEvent, TERMINAL_RUN_STATUSES } from "../../storage/types.js";
import type { RunBroker } from "../brokers/broker.js";
import { AsyncQueue } from "./async-queue.js";
import { EventSequencer } from "./event-sequencer.js";

/** What the broker tells a follower: an event, a batch written to the log, or that live delivery may have skipped some. */
type Notice = { kind: "event"; event: StoredEvent } | { kind: "logged" } | { kind: "lost" };

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
  deps: { runs: RunRepository; broker: RunBroker },
  signal?: AbortSignal,
): Promise<AsyncGenerator<StoredEvent>> {
  const inbox = new AsyncQueue<Notice>();
  const subscription = await deps.broker.subscribe(runId, {
    onEvent: (event) => inbox.push({ kind: "event", event }),
    onLogged: () => inbox.push({ kind: "logged" }),
    onLost: () => inbox.push({ kind: "lost" }),
    onEnd: () => inbox.close(),
  });
  const stop = () => inbox.close();
  signal?.addEventListener("abort", stop, { once: true });

  async function* events(): AsyncGenerator<StoredEvent> {
    const order = new EventSequencer(afterSeq);
    const fromLog = async () => order.logged(await deps.runs.readEvents(runId, order.last));
    const ended = async () => {
      const run = await deps.runs.get(runId);
      return !run || TERMINAL_RUN_STATUSES.has(run.status);
    };
    try {
      // The broker replayed all the attempt's events from this process's memory, from at or before the cursor: the
      // log holds nothing they lack. Thousands of joiners of a live run then read no log, and share the broker's event
      // objects (and the frames encoded from them) instead of a copy each. Replays from elsewhere (a Redis buffer) may
      // be partial or hold foreign entries: the log comes first then, as before.
      const replayed = inbox.peek();
      const fromMemory = subscription.replayedAll && replayed?.kind === "event" && replayed.event.seq <= afterSeq + 1;
      if (!fromMemory) yield* await fromLog();
      // The run ended before this subscribed, or as it did: its end notice may never come. Live delivery already
      // queued what it had (all of a stateless run, which logs nothing); the log holds the rest.
      if (!subscription.active && !inbox.isClosed()) {
        await subscription.replayed;
        if (!inbox.isClosed() && (await ended())) inbox.close();
      }
      for await (const notice of inbox.drain()) {
        if (notice.kind === "event") {
          const { ready, gap } = order.live(notice.event);
          yield* ready;
          // Live delivery skipped events: the log holds them, or will once their batch is written (then "logged").
          if (gap) yield* await fromLog();
        } else if (notice.kind === "logged") {
          if (order.waiting) yield* await fromLog();
        } else {
          yield* await fromLog();
          if (await ended()) break; // its end notice was lost
        }
      }
      // The run ended: the log holds every event it logged; live ones it did not log (stateless runs) come last.
      yield* await fromLog();
      yield* order.rest();
    } finally {
      signal?.removeEventListener("abort", stop);
      subscription.unsubscribe();
    }
  }
  return events();
}
