import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

/** A JSON object as stored and returned by the API. */
export type JsonObject = Record<string, unknown>;

export type SortOrder = "asc" | "desc";

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: JsonObject;
  context: JsonObject;
  metadata: JsonObject;
  version: number;
  created_at: string;
  updated_at: string;
}

export type AssistantVersion = Omit<Assistant, "updated_at">;

export interface NewAssistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: JsonObject;
  context: JsonObject;
  metadata: JsonObject;
}

export interface AssistantPatch {
  graph_id?: string;
  name?: string;
  description?: string | null;
  config?: JsonObject;
  context?: JsonObject;
  /** Merged into the current metadata. */
  metadata?: JsonObject;
}

export interface AssistantFilter {
  graph_id?: string;
  /** Case-insensitive substring of the name. */
  name?: string;
  /** JSON containment. */
  metadata?: JsonObject;
}

export interface AssistantQuery extends AssistantFilter {
  limit: number;
  offset: number;
  sort_by: "assistant_id" | "graph_id" | "name" | "created_at" | "updated_at";
  sort_order: SortOrder;
}

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";

export interface Interrupt {
  id?: string;
  value: unknown;
}

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: JsonObject;
  status: ThreadStatus;
  config: JsonObject;
  values: JsonObject | null;
  /** Pending interrupts of the current state, keyed by task id. */
  interrupts: Record<string, Interrupt[]>;
}

export interface NewThread {
  thread_id: string;
  metadata: JsonObject;
  config?: JsonObject;
}

export interface ThreadFilter {
  ids?: string[];
  status?: ThreadStatus;
  metadata?: JsonObject;
  values?: JsonObject;
}

export interface ThreadQuery extends ThreadFilter {
  limit: number;
  offset: number;
  sort_by: "thread_id" | "status" | "created_at" | "updated_at";
  sort_order: SortOrder;
}

/** The state a thread shows after its graph advanced (a run, a state update). */
export interface ThreadStateSummary {
  values: JsonObject | null;
  interrupts: Record<string, Interrupt[]>;
  status?: ThreadStatus;
}

export interface AssistantRepository {
  /** Inserts the assistant and its version 1; returns undefined when the id is taken. */
  create(assistant: NewAssistant): Promise<Assistant | undefined>;
  get(assistantId: string): Promise<Assistant | undefined>;
  /** Applies the patch as a new version that becomes current. */
  patch(assistantId: string, patch: AssistantPatch): Promise<Assistant | undefined>;
  delete(assistantId: string): Promise<boolean>;
  search(query: AssistantQuery): Promise<{ items: Assistant[]; total: number }>;
  count(filter: AssistantFilter): Promise<number>;
  versions(assistantId: string, query: { limit: number; offset: number; metadata?: JsonObject }): Promise<AssistantVersion[]>;
  /** Makes an existing version current again; undefined when the version does not exist. */
  setLatest(assistantId: string, version: number): Promise<Assistant | undefined>;
}

export interface ThreadRepository {
  /** Inserts the thread; returns undefined when the id is taken. */
  create(thread: NewThread): Promise<Thread | undefined>;
  get(threadId: string): Promise<Thread | undefined>;
  /** Merges metadata. */
  patch(threadId: string, metadata: JsonObject): Promise<Thread | undefined>;
  /** Deletes the thread with its checkpoints. */
  delete(threadId: string): Promise<boolean>;
  search(query: ThreadQuery): Promise<{ items: Thread[]; total: number }>;
  count(filter: ThreadFilter): Promise<number>;
  /** Creates `targetId` with the source's metadata, config and values, and a copy of its checkpoints. */
  copy(sourceId: string, targetId: string): Promise<Thread | undefined>;
  /** Records the state the thread shows after its graph advanced. */
  setState(threadId: string, state: ThreadStateSummary): Promise<void>;
  /** Ids of threads whose metadata contains the filter. */
  idsByMetadata(filter: JsonObject): Promise<string[]>;
}

/** The checkpointer plus the thread-wide operations the server needs from it. */
export interface BerthCheckpointer extends BaseCheckpointSaver {
  copyThread(sourceThreadId: string, targetThreadId: string): void | Promise<void>;
  deleteRun(threadId: string, runId: string): void | Promise<void>;
}

export interface Storage {
  readonly assistants: AssistantRepository;
  readonly threads: ThreadRepository;
  readonly checkpointer: BerthCheckpointer;
  close(): Promise<void>;
}
