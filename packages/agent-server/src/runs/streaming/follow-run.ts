import type { PushingEvents } from "@berth/service-kit";
import { type RunRepository, type StoredEvent, TERMINAL_RUN_STATUSES } from "../../storage/types.js";
import type { RunBroker, SubscribeOptions } from "../brokers/broker.js";
import { AsyncQueue } from "./async-queue.js";
import { EventSequencer } from "./event-sequencer.js";

/**
 * A run's events after a cursor; `fromMemory`: all of them come from this
 * process's memory, none from the log. `deliverTo(sink)` lets live events
 * that come in order skip the iteration: the sink gets them as they are
 * published, while the iterator waits, and returns false when it can take no
 * more that way (a client that does not read): the iterator hands on the rest.
 * `onCaughtUp(callback)`: called each time the follower has handed on
 * everything published so far and waits for what comes next.
 */
export type RunFollower = AsyncGenerator<StoredEvent> &
  PushingEvents<StoredEvent> & {
    fromMemory: boolean;
    onCaughtUp(callback: () => void): void;
    /** Followed from before its creation (`creating`): the creation is over (RunSubscription.created). */
    created(executingHere: boolean): void;
  };

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
  options?: SubscribeOptions,
): Promise<RunFollower> {
  const inbox = new AsyncQueue<Notice>();
  let endSeq: number | undefined;
  const subscription = await deps.broker.subscribe(
    runId,
    {
      onEvent: (event) => inbox.push({ kind: "event", event }),
      onLogged: () => inbox.push({ kind: "logged" }),
      onLost: () => inbox.push({ kind: "lost" }),
      onEnd: (notice) => {
        endSeq = notice.lastSeq;
        inbox.close();
      },
    },
    options,
  );
  const stop = () => inbox.close();
  signal?.addEventListener("abort", stop, { once: true });
  // The broker replayed all the attempt's events from this process's memory, from at or before the cursor: the
  // log holds nothing they lack. Thousands of joiners of a live run then read no log, and share the broker's event
  // objects (and the frames encoded from them) instead of a copy each. Replays from elsewhere (a Redis buffer) may
  // be partial or hold foreign entries: the log comes first then, as before.
  const replayed = inbox.peek();
  const fromMemory = !!subscription.replayedAll && replayed?.kind === "event" && replayed.event.seq <= afterSeq + 1;

  async function* events(): AsyncGenerator<StoredEvent> {
    const order = new EventSequencer(afterSeq);
    const fromLog = async () => order.logged(await deps.runs.readEvents(runId, order.last));
    const ended = async () => {
      const run = await deps.runs.get(runId);
      return !run || TERMINAL_RUN_STATUSES.has(run.status);
    };
    try {
      if (!fromMemory) yield* await fromLog();
      // The run ended before this subscribed, or as it did: its end notice may never come. Live delivery already
      // queued what it had (all of a stateless run, which logs nothing); the log holds the rest.
      if (!subscription.active && !inbox.isClosed()) {
        await subscription.replayed;
        if (!inbox.isClosed() && (await ended())) inbox.close();
      }
      // The iterator has handed on everything before whatever comes while it waits: the sink may take that, in order.
      let sinking = sink !== undefined;
      inbox.direct = (notice) => {
        if (!sinking || notice.kind !== "event" || !order.isNext(notice.event)) return false;
        try {
          sinking = sink!(notice.event);
        } catch {
          // Not the publisher's failure (it calls this): the iterator hands the event on, and meets the error.
          sinking = false;
          return false;
        }
        order.takeNext(notice.event);
        return true;
      };
      // What the broker replayed, in one go: the socket writes it all at once.
      inbox.offerQueued();
      inbox.onWait = () => caughtUp?.();
      for await (const notice of inbox.drain()) {
        if (notice.kind === "event") {
          if (order.takeNext(notice.event)) {
            yield notice.event;
            // Asked for more: what it was handed is taken, so the sink may be again.
            sinking = sink !== undefined;
            continue;
          }
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
      // Told the attempt's last event and handed it on already, the follower has them all: thousands of followers
      // of runs ending together then read nothing.
      if (endSeq === undefined || order.last < endSeq) yield* await fromLog();
      yield* order.rest();
    } finally {
      inbox.direct = undefined;
      inbox.onWait = undefined;
      leave();
    }
  }
  let sink: ((event: StoredEvent) => boolean) | undefined;
  let caughtUp: (() => void) | undefined;
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    signal?.removeEventListener("abort", stop);
    subscription.unsubscribe();
  };
  const follower = events();
  const returnOf = follower.return.bind(follower);
  return Object.assign(follower, {
    fromMemory,
    deliverTo: (to: (event: StoredEvent) => boolean) => {
      sink = to;
    },
    onCaughtUp: (callback: () => void) => {
      caughtUp = callback;
    },
    created: (executingHere: boolean) => subscription.created?.(executingHere),
    // Handed back before its first step, the generator never reaches its `finally`: it leaves here then.
    return: (value: unknown) => {
      leave();
      return returnOf(value);
    },
  });
}
