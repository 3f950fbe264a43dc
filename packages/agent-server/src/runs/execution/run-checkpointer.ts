import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type { JsonObject } from "../../storage/types.js";

/** Keys of `configurable` that address a checkpoint rather than describe the run. */
const ADDRESS_KEYS = new Set(["checkpoint_ns", "checkpoint_id", "checkpoint_map", "run_id", "thread_id"]);

/**
 * The run's `configurable` (a client's keys, forwarded `x-*` headers, its
 * user agent) as the reference server records it in checkpoint metadata,
 * where history filters can match it. LangGraph's private `__` keys stay out.
 */
function configurableMetadata(config: RunnableConfig): JsonObject {
  const entries = Object.entries(config.configurable ?? {}).filter(([key]) => !key.startsWith("__") && !ADDRESS_KEYS.has(key));
  return Object.fromEntries(entries) as JsonObject;
}

/**
 * The server's checkpointer as one run sees it: every checkpoint it writes
 * carries the run's metadata (run_id, graph_id, user metadata...), so history
 * filters find a run's checkpoints and a rollback can delete them.
 */
export class RunCheckpointer extends BaseCheckpointSaver<number> {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly inner: BaseCheckpointSaver<number>,
    private readonly runMetadata: JsonObject,
  ) {
    super(inner.serde);
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.inner.getTuple(config);
  }

  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    return this.inner.list(config, options);
  }

  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (this.closed) return Promise.resolve(config);
    return this.track(
      this.inner.put(config, checkpoint, { ...configurableMetadata(config), ...this.runMetadata, ...metadata }, newVersions),
    );
  }

  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.track(this.inner.putWrites(config, writes, taskId, taskPath));
  }

  /**
   * Takes no more writes and resolves once every write started before has
   * finished. LangGraph writes checkpoints in the background; an aborted run
   * may end before they land, and the thread's state must be read after them.
   * A node still running after its run was aborted must not write to the
   * thread later (over a rollback, or under the next run).
   */
  async close(): Promise<void> {
    this.closed = true;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track<T>(write: Promise<T>): Promise<T> {
    this.inFlight.add(write);
    void write.finally(() => this.inFlight.delete(write)).catch(() => {});
    return write;
  }

  deleteThread(threadId: string): Promise<void> {
    return this.inner.deleteThread(threadId);
  }

  override getNextVersion(current: number | undefined): number {
    return this.inner.getNextVersion(current);
  }
}
