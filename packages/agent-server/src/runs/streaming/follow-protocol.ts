import type { PushingEvents } from "@berth/service-kit";
import type { RunRepository, StoredEvent } from "../../storage/types.js";
import type { RunBroker } from "../brokers/broker.js";
import { AsyncQueue } from "./async-queue.js";
import { internEvent } from "./interned-events.js";
import { PROTOCOL_EVENT } from "./event-writer.js";
import { followRun, type RunFollower } from "./follow-run.js";

/** How many logged events one read of a thread's log returns. */
const REPLAY_PAGE = 500;

/**
 * Whether a run was started through the protocol, by run id: every follower
 * of a thread asks when a run starts, and a run's kind never changes, so one
 * lookup serves all the followers of a process.
 */
const protocolRuns = new Map<string, Promise<boolean>>();
const PROTOCOL_RUNS_KEPT = 1_000;

function isProtocolRun(runs: RunRepository, runId: string): Promise<boolean> {
  let known = protocolRuns.get(runId);
  if (!known) {
    known = runs.get(runId).then((run) => run?.kwargs.stream_protocol === "v2");
    // A failed lookup is not remembered: the next follower asks again.
    known.catch(() => protocolRuns.delete(runId));
    protocolRuns.set(runId, known);
    if (protocolRuns.size > PROTOCOL_RUNS_KEPT) protocolRuns.delete(protocolRuns.keys().next().value as string);
  }
  return known;
}

/**
 * A thread's protocol events; `deliverTo` as for a run's follower
 * (follow-run.ts). `caughtUp` settles once it has handed on everything
 * published so far (iterated, or delivered) and waits for what comes next,
 * or once it ended.
 */
export type ProtocolFollower = AsyncGenerator<StoredEvent> & PushingEvents<StoredEvent> & { caughtUp: Promise<void> };

/**
 * A thread's protocol v2 events after `since`, until the client leaves: what
 * its log holds, the run in progress, then each protocol run that starts
 * later. The seq keeps rising across the thread's runs, so one cursor (the
 * last seq handed on) follows them all; the events of classic runs on the
 * thread are not protocol events and are skipped.
 */
export function followProtocolThread(
  threadId: string,
  since: number,
  deps: { runs: RunRepository; broker: RunBroker },
  signal: AbortSignal,
): ProtocolFollower {
  let sink: ((event: StoredEvent) => boolean) | undefined;
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
  return Object.assign(protocolEvents(threadId, since, deps, signal, { sinkOf: () => sink, markCaughtUp }), {
    deliverTo: (to: (event: StoredEvent) => boolean) => {
      sink = to;
    },
    caughtUp,
  });
}

async function* protocolEvents(
  threadId: string,
  since: number,
  deps: { runs: RunRepository; broker: RunBroker },
  signal: AbortSignal,
  { sinkOf, markCaughtUp }: { sinkOf: () => ((event: StoredEvent) => boolean) | undefined; markCaughtUp: () => void },
): AsyncGenerator<StoredEvent> {
  const started = new AsyncQueue<string>();
  started.onWait = markCaughtUp;
  const unwatch = await deps.broker.watchThread(threadId, (runId) => started.push(runId));
  const stop = () => started.close();
  signal.addEventListener("abort", stop, { once: true });
  let last = since;
  const followed = new Set<string>();
  /** The event to hand on (a protocol event past the cursor, which then moves), or undefined. */
  const take = (event: StoredEvent): StoredEvent | undefined => {
    if (event.event !== PROTOCOL_EVENT || event.seq <= last) return undefined;
    last = event.seq;
    return internEvent(event);
  };
  async function* relay(follower: RunFollower) {
    for await (const event of follower) {
      const taken = take(event);
      if (taken) yield taken;
    }
  }
  async function follow(runId: string): Promise<RunFollower | undefined> {
    followed.add(runId);
    if (!(await isProtocolRun(deps.runs, runId))) return undefined;
    const follower = await followRun(runId, last, deps, signal);
    follower.onCaughtUp(markCaughtUp);
    const sink = sinkOf();
    if (sink)
      follower.deliverTo((event) => {
        const taken = take(event);
        return taken ? sink(taken) : true;
      });
    return follower;
  }
  let live: RunFollower | undefined;
  try {
    // The run in progress is followed before the log is read: should it end in between, the log holds all its
    // events by then (a run's end is recorded after its last batch is written), else it is followed from there.
    const [current] = (await deps.runs.inflight(threadId)).filter((run) => run.status === "running");
    live = current && (await follow(current.run_id));
    // Seqs rise across the thread's runs: when this process holds the run's attempt from at or before the cursor,
    // no earlier event of the thread comes after it, and the log has nothing to add.
    if (!live?.fromMemory) {
      for (let page = await deps.runs.readThreadEvents(threadId, last, REPLAY_PAGE); page.length > 0; ) {
        for (const event of page) yield internEvent(event);
        last = page.at(-1)!.seq;
        page = page.length < REPLAY_PAGE ? [] : await deps.runs.readThreadEvents(threadId, last, REPLAY_PAGE);
      }
    }
    if (live && !signal.aborted) yield* relay(live);
    for await (const runId of started.drain()) {
      if (followed.has(runId)) continue;
      const follower = await follow(runId);
      if (follower) yield* relay(follower);
    }
  } finally {
    markCaughtUp();
    await live?.return(undefined);
    signal.removeEventListener("abort", stop);
    unwatch();
  }
}
