import type { RunStatus, ThreadStatus } from "../../storage/types.js";
import { isUuid } from "../assistant-ids.js";
import { A2aError, A2aErrorCode, type TaskState } from "./protocol.js";

/** A task is a run of a thread: `<contextId>:<run_id>`, so the id alone finds it. */
export function taskIdOf(contextId: string, runId: string): string {
  return `${contextId}:${runId}`;
}

/**
 * The thread and run a task id names: the composite form, or a plain run id
 * beside a `contextId` (an explicit `contextId` wins). Malformed ids are
 * simply not found.
 */
export function parseTaskId(id: string, contextId: string | undefined): { threadId: string; runId: string } {
  const [first, second, ...rest] = id.split(":");
  const runId = second === undefined ? first : second;
  const threadId = contextId ?? (second === undefined ? undefined : first);
  if (rest.length > 0 || !runId || !threadId || !isUuid(runId) || !isUuid(threadId)) {
    throw new A2aError(A2aErrorCode.taskNotFound, `Task ${id} not found`);
  }
  return { threadId, runId };
}

/**
 * A run's status as a task state. Berth ends a run `interrupted` both when a
 * graph interrupt stops it and when a client cancels it (the thread is
 * `interrupted` after either): only the former leaves interrupts pending, so
 * `awaitingInput` says the run is its thread's latest and the thread has some.
 */
export function taskStateOf(run: RunStatus, awaitingInput: boolean): TaskState {
  switch (run) {
    case "pending":
      return "submitted";
    case "running":
      return "working";
    case "success":
    case "interrupted":
      if (awaitingInput) return "input-required";
      return run === "success" ? "completed" : "canceled";
    default:
      return "failed";
  }
}

/** The thread waits for input: a graph interrupt is pending. */
export function awaitsInput(thread: { status: ThreadStatus; interrupts: Record<string, unknown[]> }): boolean {
  return thread.status === "interrupted" && Object.values(thread.interrupts).some((pending) => pending.length > 0);
}
