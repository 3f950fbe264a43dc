import type { Client, Command, Config, StreamMode } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useReducer, useRef } from "react";
import { errorText } from "../conversations/client";
import { NO_RUN, runReducer, type StudioRun } from "./run-state";

/**
 * Which node starts and ends (`tasks`), what each wrote (`updates`), the whole state (`values`), and the tokens of
 * the chat models the nodes call (`messages-tuple`).
 */
const STREAM_MODES: StreamMode[] = ["values", "updates", "tasks", "messages-tuple"];

export interface StudioRunRequest {
  threadId: string;
  assistantId: string;
  /** null runs on from where the thread stopped (a breakpoint, a checkpoint). */
  input: Record<string, unknown> | null;
  command?: Command;
  config?: Config;
  context?: Record<string, unknown>;
  interruptBefore?: string[];
  interruptAfter?: string[];
  /** Runs from this checkpoint of the thread rather than its latest. */
  checkpointId?: string;
}

export interface StudioRunControls {
  run: StudioRun;
  start: (request: StudioRunRequest) => void;
}

/** One streamed run at a time, subgraphs included; `onEnded` is called once a run's stream ends. */
export function useStudioRun(client: Client, onEnded: () => void): StudioRunControls {
  const [run, dispatch] = useReducer(runReducer, NO_RUN);
  const reading = useRef<AbortController | null>(null);
  const ended = useRef(onEnded);
  ended.current = onEnded;

  const start = useCallback(
    (request: StudioRunRequest) => {
      reading.current?.abort();
      const controller = new AbortController();
      reading.current = controller;
      dispatch({ kind: "start", threadId: request.threadId });
      void (async () => {
        try {
          const stream = client.runs.stream(request.threadId, request.assistantId, {
            input: request.input,
            command: request.command,
            config: request.config,
            context: request.context,
            interruptBefore: request.interruptBefore?.length ? request.interruptBefore : undefined,
            interruptAfter: request.interruptAfter?.length ? request.interruptAfter : undefined,
            checkpointId: request.checkpointId,
            streamMode: STREAM_MODES,
            streamSubgraphs: true,
            signal: controller.signal,
          });
          for await (const part of stream) {
            if (controller.signal.aborted) return;
            dispatch({ kind: "part", event: part.event, data: part.data });
          }
          dispatch({ kind: "end" });
        } catch (error) {
          if (!controller.signal.aborted) dispatch({ kind: "fail", error: errorText(error) });
        } finally {
          if (reading.current === controller) {
            reading.current = null;
            ended.current();
          }
        }
      })();
    },
    [client],
  );

  useEffect(() => () => reading.current?.abort(), []);
  return { run, start };
}
