import { randomUUID } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Command } from "@langchain/langgraph";
import type { GraphRegistry } from "../graphs/registry.js";
import type { JsonObject, PruneStrategy, Storage, Thread, ThreadFilter, ThreadQuery } from "../storage/types.js";
import { summarizeState, toThreadState } from "../wire/thread-state.js";
import { ConflictError, NotFoundError, UnprocessableError } from "@berth/service-kit";
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

  async create(input: CreateThreadInput): Promise<Thread> {
    const threadId = input.thread_id ?? randomUUID();
    const metadata = input.metadata ?? {};
    const graphId = typeof metadata.graph_id === "string" ? metadata.graph_id : undefined;
    if (input.supersteps?.length) {
      if (!graphId) throw new UnprocessableError("supersteps need metadata.graph_id", ["body", "metadata", "graph_id"]);
      if (!this.graphs.has(graphId)) throw new NotFoundError(`Graph "${graphId}" not found`);
    }
    const ttl_minutes = input.ttl === undefined ? this.options.defaultTtlMinutes : input.ttl;
    const created = await this.storage.threads.create({ thread_id: threadId, metadata, ttl_minutes });
    if (!created) {
      const existing = await this.storage.threads.get(threadId);
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
    return this.get(threadId);
  }

  async get(threadId: string): Promise<Thread> {
    const thread = await this.storage.threads.get(threadId);
    if (!thread) throw new NotFoundError(`Thread with ID ${threadId} not found`);
    return thread;
  }

  /** `ttlMinutes` restarts the thread's expiry from now (null: never expires); undefined keeps it. */
  async patch(threadId: string, metadata: JsonObject, ttlMinutes?: number | null): Promise<Thread> {
    const thread = await this.storage.threads.patch(threadId, metadata, ttlMinutes);
    if (!thread) throw new NotFoundError("Thread not found");
    return thread;
  }

  async delete(threadId: string): Promise<void> {
    if (!(await this.storage.threads.delete(threadId))) throw new NotFoundError(`Thread with ID ${threadId} not found`);
  }

  /** Unknown ids are skipped: the count is of the threads pruned. */
  prune(threadIds: string[], strategy: PruneStrategy): Promise<number> {
    return this.storage.threads.prune(threadIds, strategy);
  }

  search(query: ThreadQuery): Promise<{ items: Thread[]; total: number }> {
    return this.storage.threads.search(query);
  }

  count(filter: ThreadFilter): Promise<number> {
    return this.storage.threads.count(filter);
  }

  async copy(threadId: string): Promise<Thread> {
    const copied = await this.storage.threads.copy(threadId, randomUUID());
    if (!copied) throw new NotFoundError("Thread not found");
    return copied;
  }

  private async applySupersteps(thread: Thread, graphId: string, supersteps: CreateThreadInput["supersteps"] & {}) {
    const config: RunnableConfig = { configurable: { thread_id: thread.thread_id, graph_id: graphId } };
    const graph = await this.graphs.get(graphId, config);
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
