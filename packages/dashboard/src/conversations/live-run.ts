import { appendChunk, type ShownMessage, stateMessages, transcript } from "./messages";

/** Where a watched run is: streaming, ended (finished or stopped at an interrupt), failed. */
export type LivePhase = "idle" | "starting" | "streaming" | "finished" | "interrupted" | "failed";

export interface LiveRun {
  threadId: string | null;
  runId: string | null;
  phase: LivePhase;
  /** The last `values` event's messages. */
  stateMessages: ShownMessage[];
  /** Messages assembled from `messages` events (tokens). */
  streamed: ShownMessage[];
  tokens: number;
  error: string | null;
}

export const NO_RUN: LiveRun = {
  threadId: null,
  runId: null,
  phase: "idle",
  stateMessages: [],
  streamed: [],
  tokens: 0,
  error: null,
};

export type LiveRunEvent =
  | { kind: "start"; threadId: string; runId?: string }
  | { kind: "part"; event: string; data: unknown }
  | { kind: "end" }
  | { kind: "fail"; error: string };

/** Folds the stream's parts into what the live view shows. */
export function liveRunReducer(run: LiveRun, event: LiveRunEvent): LiveRun {
  switch (event.kind) {
    case "start":
      return { ...NO_RUN, threadId: event.threadId, runId: event.runId ?? null, phase: "starting" };
    case "end":
      return run.phase === "failed" || run.phase === "interrupted" ? run : { ...run, phase: "finished" };
    case "fail":
      return { ...run, phase: "failed", error: event.error };
    case "part":
      return withPart(run, event.event, event.data);
  }
}

function withPart(run: LiveRun, event: string, data: unknown): LiveRun {
  const streaming: LiveRun = run.phase === "starting" ? { ...run, phase: "streaming" } : run;
  if (event === "metadata") {
    const runId = (data as { run_id?: string } | null)?.run_id;
    return runId ? { ...streaming, runId } : streaming;
  }
  if (event === "values") {
    // An interrupt comes as a `values` event holding only `__interrupt__`: the state shown stays.
    if (hasInterrupt(data)) return { ...streaming, phase: "interrupted" };
    return { ...streaming, stateMessages: stateMessages(data) };
  }
  if (event === "updates") return hasInterrupt(data) ? { ...streaming, phase: "interrupted" } : streaming;
  if (event === "messages") {
    const [chunk] = Array.isArray(data) ? data : [data];
    return { ...streaming, streamed: appendChunk(streaming.streamed, chunk), tokens: streaming.tokens + 1 };
  }
  if (event === "error") {
    const message = (data as { message?: string } | null)?.message;
    return { ...streaming, phase: "failed", error: message ?? JSON.stringify(data) };
  }
  return streaming;
}

function hasInterrupt(data: unknown): boolean {
  return typeof data === "object" && data !== null && "__interrupt__" in data;
}

/** The messages the live view shows. */
export function liveMessages(run: LiveRun): ShownMessage[] {
  return transcript(run.stateMessages, run.streamed);
}

export const PHASE_TEXT: Record<LivePhase, string> = {
  idle: "No run",
  starting: "Starting",
  streaming: "Streaming",
  finished: "Finished",
  interrupted: "Interrupted: waiting for an answer",
  failed: "Failed",
};
