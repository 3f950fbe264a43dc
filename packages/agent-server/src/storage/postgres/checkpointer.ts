import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  TASKS,
  getCheckpointId,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import {
  encodePut,
  encodeWrites,
  keptCheckpoints,
  loadChannelValues,
  loadWrites,
  nextChannelVersion,
  versionsParam,
  type BlobRow,
  type CheckpointKey,
  type CheckpointRow,
  type WriteRow,
} from "../shared/checkpoint-rows.js";
import {
  copyThreadCheckpoints,
  deleteRunCheckpoints,
  deleteThreadCheckpoints,
  keepLatestCheckpoints,
  selectBlobs,
  selectLatestPerNamespace,
  selectList,
  selectTuple,
  selectWrites,
} from "./checkpoint-sql.js";
import { CheckpointWriteBatch } from "./checkpoint-batch.js";
import type { Queryable } from "./database.js";
import { jsonb } from "@berth/service-kit";

/** A versions object with its keys in one order, to compare two. */
const sortedKeys = (versions: Record<string, string>) =>
  Object.entries(versions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** How many listed checkpoints share one round trip for their blobs and one for their writes. */
const LIST_BATCH = 100;

/**
 * LangGraph checkpointer over Berth's PostgreSQL database, with the design of
 * the SQLite one (see SqliteCheckpointer): a checkpoint row holds the
 * checkpoint without its channel_values; each channel value is a row of
 * checkpoint_blobs keyed by (thread, namespace, channel, version), written
 * only by the put that advanced that channel, and shared by every later
 * checkpoint whose channel_versions still name it. Encoding is shared with
 * SQLite (checkpoint-rows.ts); only the SQL differs (checkpoint-sql.ts).
 */
export class PostgresCheckpointer extends BaseCheckpointSaver {
  /** Puts of concurrent runs go out together (checkpoint-batch.ts). */
  private readonly writes: CheckpointWriteBatch;

  constructor(
    private readonly db: Queryable,
    serde?: SerializerProtocol,
  ) {
    super(serde);
    this.writes = new CheckpointWriteBatch(db);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const thread_id = config.configurable?.thread_id;
    if (thread_id === undefined || thread_id === null) return undefined; // SQLite's `thread_id = NULL` matches nothing
    const checkpoint_ns = config.configurable?.checkpoint_ns ?? "";
    const checkpoint_id = getCheckpointId(config);
    // One round trip for the checkpoint, its channel values and its writes (a run reads one before and after it).
    const found = await selectTuple(this.db, String(thread_id), checkpoint_ns, checkpoint_id || undefined);
    if (!found) return undefined;
    const stored: Omit<Checkpoint, "channel_values"> = await this.serde.loadsTyped(found.row.type, found.row.checkpoint);
    const versions = versionsParam(stored.channel_versions);
    // The statement read the versions as the JSON they were written as; otherwise look the blobs up by the decoded ones.
    const blobs =
      found.versions !== null && JSON.stringify(sortedKeys(found.versions)) === JSON.stringify(sortedKeys(JSON.parse(versions)))
        ? found.blobs
        : (await selectBlobs(this.db, [{ thread_id: found.row.thread_id, checkpoint_ns, versions: JSON.parse(versions) }]))[0];
    return this.toTuple(found.row, stored, blobs, found.writes);
  }

  override async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options;
    // Rows are fetched up front, as SQLite does; their blobs and writes are loaded a batch at a time.
    const rows = await selectList(this.db, {
      thread_id: config.configurable?.thread_id || null,
      checkpoint_ns: config.configurable?.checkpoint_ns ?? null,
      checkpoint_id: config.configurable?.checkpoint_id || null,
      before: before?.configurable?.checkpoint_id || null,
      filter: filter ?? null,
      limit: limit === undefined ? null : Math.max(0, limit),
    });
    for (let start = 0; start < rows.length; start += LIST_BATCH) {
      yield* await this.toTuples(rows.slice(start, start + LIST_BATCH));
    }
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const { row: encoded, blobs } = await encodePut(this.serde, config, checkpoint, newVersions);
    const row = { ...encoded, metadata: jsonb(metadata) }; // JSONB as given, so @> and ->> can query it
    await this.writes.putCheckpoint({ row, blobs });
    return { configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const rows = await encodeWrites(this.serde, config, writes, taskId, taskPath);
    await this.writes.putWrites(rows);
  }

  /** String versions, as the SQLite checkpointer's (see nextChannelVersion). */
  override getNextVersion(current: string | number | undefined): number {
    return nextChannelVersion(current) as unknown as number;
  }

  /** Deletes the checkpoints, writes and channel values of a thread. */
  override async deleteThread(threadId: string): Promise<void> {
    await deleteThreadCheckpoints(this.db, threadId);
  }

  /** Copies every checkpoint, write and channel value of a thread to a new thread id (which must have none yet). */
  async copyThread(sourceThreadId: string, targetThreadId: string): Promise<void> {
    await copyThreadCheckpoints(this.db, sourceThreadId, targetThreadId);
  }

  /** Deletes the checkpoints written by one run (metadata.run_id) and their writes; channel values stay. */
  async deleteRun(threadId: string, runId: string): Promise<void> {
    await deleteRunCheckpoints(this.db, threadId, runId);
  }

  async keepLatest(threadId: string): Promise<void> {
    const kept = await keptCheckpoints(this.serde, await selectLatestPerNamespace(this.db, threadId));
    await keepLatestCheckpoints(this.db, threadId, kept);
  }

  /** Tuples of checkpoint rows, with two round trips for all of them: blobs, and writes. */
  private async toTuples(rows: CheckpointRow[]): Promise<CheckpointTuple[]> {
    const stored = await Promise.all(
      rows.map((row): Promise<Omit<Checkpoint, "channel_values">> => this.serde.loadsTyped(row.type, row.checkpoint)),
    );
    const owners = rows.map((row, i) => ({
      thread_id: row.thread_id,
      checkpoint_ns: row.checkpoint_ns,
      versions: JSON.parse(versionsParam(stored[i].channel_versions)) as Record<string, string>,
    }));
    const [blobs, writes] = await Promise.all([selectBlobs(this.db, owners), selectWrites(this.db, rows)]);
    return Promise.all(rows.map((row, i) => this.toTuple(row, stored[i], blobs[i], writes[i])));
  }

  private async toTuple(
    row: CheckpointRow,
    stored: Omit<Checkpoint, "channel_values">,
    blobs: Pick<BlobRow, "channel" | "type" | "blob">[],
    writes: WriteRow[],
  ): Promise<CheckpointTuple> {
    const { thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id } = row;
    const checkpoint: Checkpoint = { ...stored, channel_values: await loadChannelValues(this.serde, blobs) };
    const parentKey =
      parent_checkpoint_id === null ? undefined : { thread_id, checkpoint_ns, checkpoint_id: parent_checkpoint_id };
    if (checkpoint.v < 4 && parentKey) await this.migratePendingSends(checkpoint, parentKey);
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id, checkpoint_ns, checkpoint_id } },
      checkpoint,
      metadata: JSON.parse(row.metadata) as CheckpointMetadata,
      pendingWrites: await loadWrites(this.serde, writes),
    };
    if (parentKey) tuple.parentConfig = { configurable: parentKey };
    return tuple;
  }

  /** Checkpoints before format v4 kept pending sends as TASKS writes of their parent. */
  private async migratePendingSends(checkpoint: Checkpoint, parentKey: CheckpointKey): Promise<void> {
    const [rows] = await selectWrites(this.db, [parentKey], TASKS);
    const sends = (await loadWrites(this.serde, rows)).map(([, , value]) => value);
    checkpoint.channel_values ??= {};
    checkpoint.channel_values[TASKS] = sends;
    checkpoint.channel_versions ??= {};
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}
