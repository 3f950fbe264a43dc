import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  copyCheckpoint,
  type PendingWrite,
  WRITES_IDX_MAP,
  type WritesSortKey,
  writesSortKey,
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

/** A root checkpoint the run wrote, as its saver keeps it. */
interface WrittenCheckpoint {
  threadId: string;
  id: string;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  parentId: string | undefined;
}

/**
 * The server's checkpointer as one run sees it: every checkpoint it writes
 * carries the run's metadata (run_id, graph_id, user metadata...), so history
 * filters find a run's checkpoints and a rollback can delete them.
 *
 * Once closed, it answers the thread's latest root checkpoint from what the
 * run wrote last (with the writes stored against it, in the saver's order)
 * instead of reading it back: nothing else writes a thread's root
 * checkpoints while a run holds it (a state update on a busy thread is a
 * 409). After a write that failed it reads from the saver again. For the
 * same reason, a thread that had no root checkpoint when the run claimed it
 * (`emptyThread`) has none until the run writes one: reads of it answer
 * nothing without asking the saver.
 */
export class RunCheckpointer extends BaseCheckpointSaver<number> {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  private settled = false;
  private writeFailed = false;
  private last: WrittenCheckpoint | undefined;
  /** Root checkpoints a later one replaced as the latest: writes against them no longer matter. */
  private readonly superseded = new Set<string>();
  /** Writes by checkpoint id, each by task and index (a checkpoint's writes may land before it does). */
  private readonly writes = new Map<string, Map<string, { key: WritesSortKey; write: CheckpointPendingWrite }>>();

  constructor(
    private readonly inner: BaseCheckpointSaver<number>,
    private readonly runMetadata: JsonObject,
    private emptyThread?: string,
  ) {
    super(inner.serde);
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    if (this.emptyThread !== undefined && this.isRootOfEmptyThread(config)) return Promise.resolve(undefined);
    const written = this.settled ? this.lastWritten(config) : undefined;
    return written ? Promise.resolve(written) : this.inner.getTuple(config);
  }

  private isRootOfEmptyThread(config: RunnableConfig): boolean {
    const { thread_id, checkpoint_ns } = config.configurable ?? {};
    return thread_id === this.emptyThread && (checkpoint_ns ?? "") === "";
  }

  /** The run's last root checkpoint as a saver returns it, when `config` asks for it. */
  private lastWritten(config: RunnableConfig): CheckpointTuple | undefined {
    const last = this.last;
    const asked = config.configurable ?? {};
    if (!last || this.writeFailed || asked.thread_id !== last.threadId || (asked.checkpoint_ns ?? "") !== "") return undefined;
    if (asked.checkpoint_id !== undefined && asked.checkpoint_id !== last.id) return undefined;
    const address = (checkpointId: string) => ({
      configurable: { thread_id: last.threadId, checkpoint_ns: "", checkpoint_id: checkpointId },
    });
    const pending = [...(this.writes.get(last.id)?.values() ?? [])].sort((a, b) => compareWritesSortKeys(a.key, b.key));
    return {
      config: address(last.id),
      checkpoint: copyCheckpoint(last.checkpoint),
      metadata: last.metadata,
      ...(last.parentId ? { parentConfig: address(last.parentId) } : {}),
      pendingWrites: pending.map(({ write }) => write),
    };
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
    if (this.emptyThread !== undefined && this.isRootOfEmptyThread(config)) this.emptyThread = undefined;
    const stored = { ...configurableMetadata(config), ...this.runMetadata, ...metadata };
    return this.track(
      this.inner.put(config, checkpoint, stored, newVersions).then((written) => {
        const { thread_id, checkpoint_ns, checkpoint_id } = written.configurable ?? {};
        if (typeof thread_id === "string" && typeof checkpoint_id === "string" && (checkpoint_ns ?? "") === "")
          this.wrote({
            threadId: thread_id,
            id: checkpoint_id,
            checkpoint,
            metadata: stored,
            parentId: config.configurable?.checkpoint_id,
          });
        return written;
      }),
    );
  }

  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.track(
      this.inner.putWrites(config, writes, taskId, taskPath).then(() => {
        const { checkpoint_ns, checkpoint_id } = config.configurable ?? {};
        if (typeof checkpoint_id === "string" && (checkpoint_ns ?? "") === "")
          this.wroteWrites(checkpoint_id, writes, taskId, taskPath ?? "");
      }),
    );
  }

  /**
   * LangGraph chains its checkpoint writes: the last one to land is the
   * latest. Task writes are not chained with them: those against the next
   * checkpoint may land before this one does, and are kept.
   */
  private wrote(written: WrittenCheckpoint): void {
    const previous = this.last;
    if (previous && previous.id !== written.id) {
      this.superseded.add(previous.id);
      this.writes.delete(previous.id);
    }
    this.last = written;
  }

  /** As the savers store them: special writes (errors, interrupts...) replace the task's earlier one, others keep the first. */
  private wroteWrites(checkpointId: string, writes: PendingWrite[], taskId: string, taskPath: string): void {
    if (this.superseded.has(checkpointId)) return;
    let stored = this.writes.get(checkpointId);
    if (!stored) this.writes.set(checkpointId, (stored = new Map()));
    writes.forEach(([channel, value], position) => {
      const idx = WRITES_IDX_MAP[channel] ?? position;
      const slot = `${taskId}\u0000${idx}`;
      if (idx >= 0 && stored.has(slot)) return;
      stored.set(slot, { key: writesSortKey(taskPath, taskId, idx), write: [taskId, channel, value] });
    });
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
    this.settled = true;
  }

  private track<T>(write: Promise<T>): Promise<T> {
    this.inFlight.add(write);
    void write
      .catch(() => {
        this.writeFailed = true;
      })
      .finally(() => this.inFlight.delete(write));
    return write;
  }

  deleteThread(threadId: string): Promise<void> {
    return this.inner.deleteThread(threadId);
  }

  override getNextVersion(current: number | undefined): number {
    return this.inner.getNextVersion(current);
  }
}
