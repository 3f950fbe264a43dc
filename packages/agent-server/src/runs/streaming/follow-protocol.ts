import type { RunRepository, StoredEvent } from "../../storage/types.js";
import type { RunBroker } from "../brokers/broker.js";
import { AsyncQueue } from "./async-queue.js";
import { PROTOCOL_EVENT } from "./event-writer.js";
import { followRun } from "./follow-run.js";

/** How many logged events one read of a thread's log returns. */
const REPLAY_PAGE = 500;

/**
 * A thread's protocol v2 events after `since`, until the client leaves: what
 * its log holds, the run in progress, then each protocol run that starts
 * later. The seq keeps rising across the thread's runs, so one cursor (the
 * last seq handed on) follows them all; the events of classic runs on the
 * thread are not protocol events and are skipped.
 */
export async function* followProtocolThread(
  threadId: string,
  since: number,
  deps: { runs: RunRepository; broker: RunBroker },
  signal: AbortSignal,
): AsyncGenerator<StoredEvent> {
  const started = new AsyncQueue<string>();
  const unwatch = await deps.broker.watchThread(threadId, (runId) => started.push(runId));
  const stop = () => started.close();
  signal.addEventListener("abort", stop, { once: true });
  let last = since;
  const followed = new Set<string>();
  async function* relay(runId: string) {
    followed.add(runId);
    const run = await deps.runs.get(runId);
    if (run?.kwargs.stream_protocol !== "v2") return;
    for await (const event of await followRun(runId, last, deps, signal)) {
      if (event.event !== PROTOCOL_EVENT || event.seq <= last) continue;
      last = event.seq;
      yield event;
    }
  }
  try {
    for (let page = await deps.runs.readThreadEvents(threadId, last, REPLAY_PAGE); page.length > 0; ) {
      for (const event of page) yield event;
      last = page.at(-1)!.seq;
      page = page.length < REPLAY_PAGE ? [] : await deps.runs.readThreadEvents(threadId, last, REPLAY_PAGE);
    }
    const [current] = (await deps.runs.inflight(threadId)).filter((run) => run.status === "running");
    if (current && !signal.aborted) yield* relay(current.run_id);
    for await (const runId of started.drain()) {
      if (!followed.has(runId)) yield* relay(runId);
    }
  } finally {
    signal.removeEventListener("abort", stop);
    unwatch();
  }
}
