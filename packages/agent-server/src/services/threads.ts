import { newId } from "./ids.js";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { GraphRegistry } from "../graphs/registry.js";
import type { JsonObject, PruneStrategy, Storage, Thread, ThreadFilter, ThreadQuery } from "../storage/types.js";
import { summarizeState, toThreadState } from "../wire/thread-state.js";
import { ConflictError, NotFoundError, UnprocessableError } from "@berth/service-kit";
import { type Access, metadataOf } from "./authorization.js";
import { withGraphInput } from "./graph-errors.js";

export interface SuperstepUpdate {
  values?: unknown;
  command?: Record<string, unknown> | null;
  as_node: string;
}

export interface CreateThreadInput {
  thread_id?: string;
  metadata?: JsonObject;
  if_exists?: "raise" | "do_nothing";
  supersteps?: { updates: SuperstepUpdate[] }[];
  /** Minutes the thread lives; null: forever; absent: the project's `checkpointer.ttl.default_ttl`. */
  ttl?: number | null;
}

export interface ThreadServiceOptions {
  /** langgraph.json's `checkpointer.ttl.default_ttl`: minutes a thread created without `ttl` lives; null: forever. */
  defaultTtlMinutes: number | null;
}

export class ThreadService {
  constructor(
    private readonly storage: Storage,
    private readonly graphs: GraphRegistry,
    private readonly options: ThreadServiceOptions = { defaultTtlMinutes: null },
  ) {}

  async create(input: CreateThreadInput, access: Access): Promise<Thread> {
    const threadId = input.thread_id ?? newId();
    const { scope, value } = await access.authorize("threads:create", {
      thread_id: threadId,
      metadata: { ...input.metadata },
      if_exists: input.if_exists ?? "raise",
    });
    const metadata = metadataOf(value);
    const graphId = typeof metadata.graph_id === "string" ? metadata.graph_id : undefined;
    if (input.supersteps?.length) {
      if (!graphId) throw new UnprocessableError("supersteps need metadata.graph_id", ["body", "metadata", "graph_id"]);
      if (!this.graphs.has(graphId)) throw new NotFoundError(`Graph "${graphId}" not found`);
    }
    const ttl_minutes = input.ttl === undefined ? this.options.defaultTtlMinutes : input.ttl;
    const created = await this.storage.threads.create({ thread_id: threadId, metadata, ttl_minutes });
    if (!created) {
      // Another user's thread is taken all the same, and stays out of reach.
      const existing = await this.storage.threads.get(threadId, scope);
      if (input.if_exists === "do_nothing" && existing) return existing;
      throw new ConflictError("Thread already exists");
    }
    if (!input.supersteps?.length || !graphId) return created;
    try {
      await this.applySupersteps(created, graphId, input.supersteps);
    } catch (error) {
      // No half-created thread: the thread and whatever checkpoints were written go together.
      await this.storage.threads.delete(threadId);
      throw error;
    }
    return (await this.storage.threads.get(threadId)) ?? created;
  }

  async get(threadId: string, access: Access): Promise<Thread> {
    const { scope } = await access.authorize("threads:read", { thread_id: threadId });
    const thread = await this.storage.threads.get(threadId, scope);
    if (!thread) throw new NotFoundError(`Thread with ID ${threadId} not found`);
    return thread;
  }

  /** `ttlMinutes` restarts the thread's expiry from now (null: never expires); undefined keeps it. */
  async patch(threadId: string, metadata: JsonObject, ttlMinutes: number | null | undefined, access: Access): Promise<Thread> {
    const { scope, value } = await access.authorize("threads:update", { thread_id: threadId, metadata: { ...metadata } });
    const thread = await this.storage.threads.patch(threadId, metadataOf(value), ttlMinutes, scope);
    if (!thread) throw new NotFoundError("Thread not found");
    return thread;
  }

  async delete(threadId: string, access: Access): Promise<void> {
    const { scope } = await access.authorize("threads:delete", { thread_id: threadId });
    if (!(await this.storage.threads.delete(threadId, scope))) throw new NotFoundError(`Thread with ID ${threadId} not found`);
  }

  /** Unknown ids (and threads out of the user's reach) are skipped: the count is of the threads pruned. */
  async prune(threadIds: string[], strategy: PruneStrategy, access: Access): Promise<number> {
    const { scope } = await access.authorize("threads:delete", { thread_ids: threadIds, strategy });
    return this.storage.threads.prune(threadIds, strategy, scope);
  }

  async search(query: ThreadQuery, access: Access): Promise<{ items: Thread[]; total: number }> {
    const { scope } = await access.authorize("threads:search", searchValue(query));
    return this.storage.threads.search({ ...query, scope });
  }

  async count(filter: ThreadFilter, access: Access): Promise<number> {
    const { scope } = await access.authorize("threads:search", searchValue(filter));
    return this.storage.threads.count({ ...filter, scope });
  }

  /**
   * Copying takes reading the source and creating the copy, as on the reference
   * server: `threads:read` on the source, then `threads:create` on the new thread
   * with the source's metadata, which a handler may refuse or stamp (the copy's
   * owner). A missing source and another user's are the same 409, so the answer
   * tells nothing of a thread the user cannot see.
   */
  async copy(threadId: string, access: Access): Promise<Thread> {
    const { scope } = await access.authorize("threads:read", { thread_id: threadId });
    const source = await this.storage.threads.get(threadId, scope);
    if (!source) throw new ConflictError("Thread not found");
    const targetId = newId();
    const { value, handled } = await access.authorize("threads:create", {
      thread_id: targetId,
      metadata: { ...source.metadata },
      if_exists: "raise",
    });
    const copied = await this.storage.threads.copy(threadId, targetId, scope, handled ? metadataOf(value) : undefined);
    if (!copied) throw new ConflictError("Thread not found");
    return copied;
  }

  private async applySupersteps(thread: Thread, graphId: string, supersteps: CreateThreadInput["supersteps"] & {}) {
    const config: RunnableConfig = { configurable: { thread_id: thread.thread_id, graph_id: graphId } };
    const graph = await this.graphs.get(graphId, config);
    const { Command } = await import("@langchain/langgraph"); // loaded with the graph
    await withGraphInput(
      () =>
        graph.bulkUpdateState(
          config,
          supersteps.map((step) => ({
            updates: step.updates.map((update) => ({
              values: update.command ? new Command(update.command) : update.values,
              asNode: update.as_node,
            })),
          })),
        ),
      ["body", "supersteps"],
    );
    const state = toThreadState(await graph.getState(config));
    await this.storage.threads.setState(thread.thread_id, summarizeState(state));
  }
}

/** The `threads:search` value handlers see (the SDK's ThreadSearch). */
function searchValue(filter: ThreadFilter & { limit?: number; offset?: number }) {
  return {
    ids: filter.ids,
    status: filter.status,
    metadata: filter.metadata,
    values: filter.values,
    limit: filter.limit,
    offset: filter.offset,
  };
}
