import type { RunRepository } from "../../storage/types.js";
import type { RunBroker } from "../brokers/broker.js";
import { AsyncQueue } from "./async-queue.js";
import { followRun } from "./follow-run.js";

/** An event of a thread stream: ids are `<run_id>:<seq>`, so a client can resume across runs. */
export interface ThreadStreamEvent {
  id: string;
  event: string;
  data: string;
}

/** Parses a thread stream's `Last-Event-ID`. */
export function parseThreadEventId(id: string | undefined): { runId: string; seq: number } | undefined {
  const match = id && /^([0-9a-f-]{36}):(-?\d+)$/.exec(id);
  return match ? { runId: match[1], seq: Number(match[2]) } : undefined;
}

/**
 * Every run of a thread, one after the other, until the client leaves: the
 * run in progress (from where the client left off, or from now), then each
 * run that starts later, from its first event.
 */
export async function* followThread(
  threadId: string,
  resumeFrom: { runId: string; seq: number } | undefined,
  deps: { runs: RunRepository; broker: RunBroker },
  signal: AbortSignal,
): AsyncGenerator<ThreadStreamEvent> {
  const started = new AsyncQueue<string>();
  const unwatch = await deps.broker.watchThread(threadId, (runId) => started.push(runId));
  const stop = () => started.close();
  signal.addEventListener("abort", stop, { once: true });
  const followed = new Set<string>();
  async function* relay(runId: string, afterSeq: number) {
    followed.add(runId);
    for await (const event of await followRun(runId, afterSeq, deps, signal)) {
      yield { id: `${runId}:${event.seq}`, event: event.event, data: event.data };
    }
  }
  try {
    if (resumeFrom) yield* relay(resumeFrom.runId, resumeFrom.seq);
    const [current] = (await deps.runs.inflight(threadId)).filter((run) => run.status === "running");
    if (current && !followed.has(current.run_id)) {
      yield* relay(current.run_id, await deps.runs.lastEventSeq(current.run_id));
    }
    for await (const runId of started.drain()) {
      if (!followed.has(runId)) yield* relay(runId, -1);
    }
  } finally {
    signal.removeEventListener("abort", stop);
    unwatch();
  }
}
