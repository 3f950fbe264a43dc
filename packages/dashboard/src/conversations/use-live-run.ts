import type { Client, Command, StreamMode } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useReducer, useRef } from "react";
import { errorText } from "./client";
import { type LiveRun, liveRunReducer, NO_RUN } from "./live-run";

/** Whole states (the transcript as stored), tokens as they come, and node updates (where an interrupt shows first). */
const STREAM_MODES: StreamMode[] = ["values", "messages-tuple", "updates"];

export interface RunRequest {
  threadId: string;
  assistantId: string;
  input?: Record<string, unknown>;
  command?: Command;
}

export interface LiveRunControls {
  run: LiveRun;
  /** Starts a run on the thread and streams it. */
  start: (request: RunRequest) => void;
  /** Streams a run already going (started elsewhere) from now on. */
  watch: (threadId: string, runId: string) => void;
  /** Stops reading the stream; the run itself goes on. */
  stopWatching: () => void;
}

/** One streamed run at a time; `onSettled` is called when it starts and ends, for lists to reload. */
export function useLiveRun(client: Client, onSettled: () => void): LiveRunControls {
  const [run, dispatch] = useReducer(liveRunReducer, NO_RUN);
  const reading = useRef<AbortController | null>(null);
  const settled = useRef(onSettled);
  settled.current = onSettled;

  const read = useCallback(
    async (threadId: string, open: (signal: AbortSignal) => AsyncIterable<{ event: string; data: unknown }>) => {
      reading.current?.abort();
      const controller = new AbortController();
      reading.current = controller;
      dispatch({ kind: "start", threadId });
      try {
        for await (const part of open(controller.signal)) {
          if (controller.signal.aborted) return;
          dispatch({ kind: "part", event: part.event, data: part.data });
          if (part.event === "metadata") settled.current();
        }
        dispatch({ kind: "end" });
      } catch (error) {
        if (!controller.signal.aborted) dispatch({ kind: "fail", error: errorText(error) });
      } finally {
        if (reading.current === controller) reading.current = null;
        settled.current();
      }
    },
    [],
  );

  const start = useCallback(
    (request: RunRequest) =>
      void read(request.threadId, (signal) =>
        client.runs.stream(request.threadId, request.assistantId, {
          input: request.input,
          command: request.command,
          streamMode: STREAM_MODES,
          signal,
        }),
      ),
    [client, read],
  );

  const watch = useCallback(
    (threadId: string, runId: string) =>
      void read(threadId, (signal) => client.runs.joinStream(threadId, runId, { signal, streamMode: STREAM_MODES })),
    [client, read],
  );

  const stopWatching = useCallback(() => {
    reading.current?.abort();
    reading.current = null;
    dispatch({ kind: "end" });
  }, []);

  useEffect(() => () => reading.current?.abort(), []);
  return { run, start, watch, stopWatching };
}
