import type { RunnableConfig } from "@langchain/core/runnables";
import type { StateSnapshot } from "@langchain/langgraph";
import type { Interrupt, JsonObject, ThreadStateSummary } from "../storage/types.js";
import { toWire } from "./serialize.js";

export interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  checkpoint_map: Record<string, string> | null;
}

export interface ThreadStateTask {
  id: string;
  name: string;
  path: unknown[];
  error: string | null;
  interrupts: Interrupt[];
  checkpoint: CheckpointRef | JsonObject | null;
  state: SubgraphState | null;
  result: unknown;
}

export interface ThreadState {
  values: unknown;
  next: string[];
  tasks: ThreadStateTask[];
  metadata: JsonObject;
  created_at: string | null;
  checkpoint: CheckpointRef | null;
  parent_checkpoint: CheckpointRef | null;
  checkpoint_id: string | null;
  parent_checkpoint_id: string | null;
}

/**
 * A subgraph's state shown in its parent's task (`?subgraphs=true`): without the flat `checkpoint_id` and
 * `parent_checkpoint_id`, which only the top level carries (the reference sends neither there).
 */
export type SubgraphState = Omit<ThreadState, "checkpoint_id" | "parent_checkpoint_id">;

function subgraphState(snapshot: StateSnapshot): SubgraphState {
  const { checkpoint_id: _id, parent_checkpoint_id: _parentId, ...state } = toThreadState(snapshot);
  return state;
}

/** The state of a thread that has no graph (or no checkpoint) yet. */
export function emptyThreadState(): ThreadState {
  return {
    values: {},
    next: [],
    tasks: [],
    metadata: {},
    created_at: null,
    checkpoint: null,
    parent_checkpoint: null,
    checkpoint_id: null,
    parent_checkpoint_id: null,
  };
}

export function checkpointRef(config: RunnableConfig | undefined): CheckpointRef | null {
  const configurable = config?.configurable;
  if (!configurable?.checkpoint_id) return null;
  return {
    thread_id: configurable.thread_id,
    checkpoint_ns: configurable.checkpoint_ns ?? "",
    checkpoint_id: configurable.checkpoint_id,
    checkpoint_map: configurable.checkpoint_map ?? null,
  };
}

/**
 * Where a subgraph task keeps its state, as the reference shows it: the
 * task's configurable (`{thread_id, checkpoint_ns}` before the subgraph ran a
 * checkpoint of its own), without LangGraph's internal keys.
 */
function taskCheckpoint(config: RunnableConfig | undefined): JsonObject | null {
  const configurable = config?.configurable;
  if (!configurable?.thread_id) return null;
  return toWire(Object.fromEntries(Object.entries(configurable).filter(([key]) => !key.startsWith("__")))) as JsonObject;
}

function isSnapshot(state: unknown): state is StateSnapshot {
  return typeof state === "object" && state !== null && "values" in state && "next" in state;
}

function errorText(error: unknown): string | null {
  if (error === undefined || error === null) return null;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === "string" ? error : JSON.stringify(toWire(error));
}

/** The API shape of a LangGraph state snapshot. */
export function toThreadState(snapshot: StateSnapshot): ThreadState {
  const checkpoint = checkpointRef(snapshot.config);
  const parent = checkpointRef(snapshot.parentConfig);
  return {
    values: toWire(snapshot.values ?? {}),
    next: [...snapshot.next],
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      path: (toWire(task.path ?? []) as unknown[]) ?? [],
      error: errorText(task.error),
      interrupts: toWire(task.interrupts) as Interrupt[],
      checkpoint: isSnapshot(task.state) ? null : taskCheckpoint(task.state),
      state: isSnapshot(task.state) ? subgraphState(task.state) : null,
      result: task.result === undefined ? null : toWire(task.result),
    })),
    metadata: (toWire(snapshot.metadata ?? {}) as JsonObject) ?? {},
    created_at: snapshot.createdAt ?? null,
    checkpoint,
    parent_checkpoint: parent,
    checkpoint_id: checkpoint?.checkpoint_id ?? null,
    parent_checkpoint_id: parent?.checkpoint_id ?? null,
  };
}

/** What the thread record shows of a state: values, pending interrupts, and whether it waits. */
export function summarizeState(state: ThreadState): ThreadStateSummary {
  const interrupts: Record<string, Interrupt[]> = {};
  for (const task of state.tasks) {
    if (task.interrupts.length > 0) interrupts[task.id] = task.interrupts;
  }
  return {
    // A thread with no checkpoint (left) has no values, as a new thread.
    values: state.checkpoint ? (state.values as JsonObject) : null,
    interrupts,
    status: state.next.length > 0 ? "interrupted" : "idle",
  };
}
