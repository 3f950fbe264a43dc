import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import type { CompiledGraph } from "../graphs/compiled-graph.js";
import type { GraphRegistry } from "../graphs/registry.js";
import type { JsonObject, Storage, Thread } from "../storage/types.js";
import {
  type CheckpointRef,
  checkpointRef,
  emptyThreadState,
  summarizeState,
  type ThreadState,
  toThreadState,
} from "../wire/thread-state.js";
import { ConflictError, NotFoundError, UnprocessableError } from "@berth/service-kit";
import type { Access } from "./authorization.js";
import { readingGraphState, withGraphInput } from "./graph-errors.js";

/** A checkpoint as clients address it: all fields optional but the ones they know. */
export interface CheckpointSelector {
  checkpoint_id?: string;
  checkpoint_ns?: string;
  checkpoint_map?: Record<string, string>;
}

export interface HistoryQuery {
  limit: number;
  before?: string | CheckpointSelector;
  metadata?: JsonObject;
  checkpoint?: CheckpointSelector;
}

export interface StateUpdate {
  values?: unknown;
  as_node?: string;
  checkpoint_id?: string;
  checkpoint?: CheckpointSelector;
}

/** Reading and writing a thread's graph state through its graph. */
export class GraphStateService {
  constructor(
    private readonly storage: Storage,
    private readonly graphs: GraphRegistry,
  ) {}

  async get(
    threadId: string,
    checkpoint: CheckpointSelector | undefined,
    subgraphs: boolean,
    access: Access,
  ): Promise<ThreadState> {
    const thread = await this.thread(threadId, access, "read");
    const graph = await this.graphOf(thread);
    if (!graph) {
      if (checkpoint?.checkpoint_id) throw new NotFoundError(`Checkpoint ${checkpoint.checkpoint_id} not found`);
      return emptyThreadState();
    }
    const config = this.config(thread, checkpoint);
    if (checkpoint?.checkpoint_id && !(await (await this.storage.checkpointer()).getTuple(config))) {
      throw new NotFoundError(`Checkpoint ${checkpoint.checkpoint_id} not found`);
    }
    const state = toThreadState(await readingGraphState(threadId, () => graph.getState(config, { subgraphs })));
    return state.checkpoint ? state : emptyThreadState();
  }

  async history(threadId: string, query: HistoryQuery, access: Access): Promise<ThreadState[]> {
    const thread = await this.thread(threadId, access, "read");
    const graph = await this.graphOf(thread);
    if (!graph) return [];
    const before = typeof query.before === "string" ? { checkpoint_id: query.before } : query.before;
    const states: ThreadState[] = [];
    const history = graph.getStateHistory(this.config(thread, query.checkpoint), {
      limit: query.limit,
      before: before ? this.config(thread, before) : undefined,
      filter: query.metadata,
    });
    await readingGraphState(threadId, async () => {
      for await (const snapshot of history) states.push(toThreadState(snapshot));
    });
    return states;
  }

  /** Applies an update as if `as_node` wrote it; refused while a run is active on the thread. */
  async update(
    threadId: string,
    update: StateUpdate,
    access: Access,
  ): Promise<{ checkpoint: CheckpointRef | null; configurable: CheckpointRef | null }> {
    const thread = await this.thread(threadId, access, "update");
    if (thread.status === "busy") throw new ConflictError("Thread is busy");
    const graph = await this.graphOf(thread);
    if (!graph) {
      throw new UnprocessableError(`Thread ${threadId} has no graph: create it with metadata.graph_id or run it first`, ["body"]);
    }
    const selector = update.checkpoint ?? (update.checkpoint_id ? { checkpoint_id: update.checkpoint_id } : undefined);
    if (selector?.checkpoint_id && !(await (await this.storage.checkpointer()).getTuple(this.config(thread, selector)))) {
      throw new NotFoundError(`Checkpoint ${selector.checkpoint_id} not found`);
    }
    const written = await withGraphInput(
      () => graph.updateState(this.config(thread, selector), update.values, update.as_node),
      ["body", "values"],
    );
    const current = toThreadState(await graph.getState(this.config(thread, undefined)));
    await this.storage.threads.setState(threadId, summarizeState(current));
    const checkpoint = checkpointRef(written);
    // The official server answers `{checkpoint}`; the JS SDK's type reads `{configurable}`: both are sent.
    return { checkpoint, configurable: checkpoint };
  }

  /**
   * Merges `metadata` into the metadata of the thread's latest checkpoint (or
   * the selected one). The checkpoint is put again under its own id with its
   * parent, so its values, writes and place in the history do not change.
   */
  async patchMetadata(
    threadId: string,
    metadata: JsonObject,
    selector: CheckpointSelector | undefined,
    access: Access,
  ): Promise<void> {
    const thread = await this.thread(threadId, access, "update");
    const config = this.config(thread, selector);
    const tuple = await (await this.storage.checkpointer()).getTuple(config);
    if (!tuple) {
      throw new NotFoundError(
        selector?.checkpoint_id ? `Checkpoint ${selector.checkpoint_id} not found` : `Thread ${threadId} has no checkpoint`,
      );
    }
    const { thread_id, checkpoint_ns } = tuple.config.configurable ?? {};
    const parent = tuple.parentConfig ?? { configurable: { thread_id, checkpoint_ns } };
    // Client metadata is free-form: LangGraph's own keys (source, step, parents) stay unless the client overrides them.
    const merged = { ...tuple.metadata, ...metadata } as CheckpointMetadata;
    await (await this.storage.checkpointer()).put(parent, tuple.checkpoint, merged, {});
  }

  /** The thread, if the user may read (or update) it: another user's is not found. */
  private async thread(threadId: string, access: Access, action: "read" | "update"): Promise<Thread> {
    const { scope } = await access.authorize(`threads:${action}`, { thread_id: threadId });
    const thread = await this.storage.threads.get(threadId, scope);
    if (!thread) throw new NotFoundError(`Thread ${threadId} not found`);
    return thread;
  }

  /**
   * The thread's graph, built as its runs build it: a factory gets the config
   * of the thread's assistant under the thread's own, or it could make other
   * nodes than the ones its checkpoints name.
   */
  private async graphOf(thread: Thread): Promise<CompiledGraph | undefined> {
    const graphId = thread.metadata.graph_id;
    if (typeof graphId !== "string" || !this.graphs.has(graphId)) return undefined;
    const assistantId = thread.metadata.assistant_id;
    const assistant = typeof assistantId === "string" ? await this.storage.assistants.get(assistantId) : undefined;
    const own = this.config(thread, undefined);
    const assistantConfig = (assistant?.config ?? {}) as RunnableConfig;
    return this.graphs.get(graphId, {
      ...assistantConfig,
      ...own,
      configurable: {
        ...assistantConfig.configurable,
        ...(assistant ? { assistant_id: assistant.assistant_id } : {}),
        ...own.configurable,
      },
    });
  }

  private config(thread: Thread, checkpoint: CheckpointSelector | undefined): RunnableConfig {
    const threadConfigurable = (thread.config.configurable as JsonObject | undefined) ?? {};
    return {
      ...thread.config,
      configurable: {
        ...threadConfigurable,
        thread_id: thread.thread_id,
        graph_id: thread.metadata.graph_id,
        checkpoint_ns: checkpoint?.checkpoint_ns ?? "",
        ...(checkpoint?.checkpoint_id ? { checkpoint_id: checkpoint.checkpoint_id } : {}),
        ...(checkpoint?.checkpoint_map ? { checkpoint_map: checkpoint.checkpoint_map } : {}),
      },
    };
  }
}
