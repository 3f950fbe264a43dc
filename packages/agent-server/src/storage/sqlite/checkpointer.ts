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
  type CheckpointPendingWrite,
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
  type KeptCheckpoint,
  type LatestRow,
  type WriteRow,
} from "../shared/checkpoint-rows.js";
import { CHECKPOINT_BLOB_COLUMNS, CHECKPOINT_COLUMNS, CHECKPOINT_WRITE_COLUMNS } from "../shared/columns.js";
import { SqliteCheckpointTables } from "./checkpoint-tables.js";
import type { SqliteDatabase } from "./database.js";
import { type GroupCommit, groupCommitOf } from "./group-commit.js";

/** `list` parameters: null disables a condition; limit -1 means no limit, as in SQLite. */
type ListParams = {
  [key in "thread_id" | "checkpoint_ns" | "checkpoint_id" | "before" | "filter"]: string | null;
} & { limit: number };

/** Checkpoint rows as CheckpointRow: metadata is stored as JSON text. */
const COLUMNS = `${CHECKPOINT_COLUMNS}, metadata`;
const BY_KEY = "thread_id = @thread_id AND checkpoint_ns = @checkpoint_ns AND checkpoint_id = @checkpoint_id";

// Two variants so that a thread-scoped listing can use the primary key index.
function listSql(byThread: boolean): string {
  return `SELECT ${COLUMNS} FROM checkpoints
    WHERE ${byThread ? "thread_id = @thread_id" : "1"}
      AND (@checkpoint_ns IS NULL OR checkpoint_ns = @checkpoint_ns)
      AND (@checkpoint_id IS NULL OR checkpoint_id = @checkpoint_id)
      AND (@before IS NULL OR checkpoint_id < @before)
      AND (@filter IS NULL OR json_contains(metadata, @filter))
    ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns
    LIMIT @limit`;
}

/** A checkpoint's channel_versions, as given by versionsParam. */
type BlobsParams = Omit<CheckpointKey, "checkpoint_id"> & { versions: string };

/** Every statement and transaction the checkpointer runs, prepared once. */
function prepare(db: SqliteDatabase) {
  const insertWrite = (verb: string) =>
    db.prepare<WriteRow>(
      `${verb} INTO checkpoint_writes (${CHECKPOINT_WRITE_COLUMNS})
       VALUES (@thread_id, @checkpoint_ns, @checkpoint_id, @task_id, @task_path, @idx, @channel, @type, @value)`,
    );
  const replaceWrite = insertWrite("INSERT OR REPLACE");
  const keepWrite = insertWrite("INSERT OR IGNORE");
  // A (channel, version) names one value, so an existing blob is already right.
  const putBlob = db.prepare<BlobRow>(
    `INSERT INTO checkpoint_blobs (${CHECKPOINT_BLOB_COLUMNS}) VALUES (@thread_id, @checkpoint_ns, @channel, @version, @type, @blob)
     ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING`,
  );
  // Re-putting a checkpoint id replaces its content but keeps its creation time.
  const putCheckpoint = db.prepare<CheckpointRow & { created_at: string }>(
    `INSERT INTO checkpoints (${COLUMNS}, created_at)
     VALUES (@thread_id, @checkpoint_ns, @checkpoint_id, @parent_checkpoint_id, @type, @checkpoint, @metadata, @created_at)
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
       parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
       checkpoint = excluded.checkpoint, metadata = excluded.metadata`,
  );
  // keepLatest's statements: everything of a namespace older than its newest checkpoint.
  type KeepParams = { thread_id: string; checkpoint_ns: string; checkpoint_id: string; versions: string };
  const OF_NS = "thread_id = @thread_id AND checkpoint_ns = @checkpoint_ns";
  const deleteOlderWrites = db.prepare<KeepParams>(
    `DELETE FROM checkpoint_writes WHERE ${OF_NS} AND checkpoint_id < @checkpoint_id`,
  );
  const deleteOlderCheckpoints = db.prepare<KeepParams>(
    `DELETE FROM checkpoints WHERE ${OF_NS} AND checkpoint_id < @checkpoint_id`,
  );
  const clearParent = db.prepare<KeepParams>(
    `UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE ${OF_NS} AND checkpoint_id = @checkpoint_id`,
  );
  // Versions sort by their zero-padded counter: one below the kept version is no longer named by any kept
  // checkpoint, while newer versions (a run writing meanwhile) are left alone.
  const deleteOlderBlobs = db.prepare<KeepParams>(
    `DELETE FROM checkpoint_blobs WHERE ${OF_NS} AND EXISTS
       (SELECT 1 FROM json_each(@versions) AS v WHERE v.key = checkpoint_blobs.channel AND checkpoint_blobs.version < v.value)`,
  );

  return {
    getById: db.prepare<CheckpointKey, CheckpointRow>(`SELECT ${COLUMNS} FROM checkpoints WHERE ${BY_KEY}`),
    getLatest: db.prepare<Omit<CheckpointKey, "checkpoint_id">, CheckpointRow>(
      `SELECT ${COLUMNS} FROM checkpoints WHERE thread_id = @thread_id AND checkpoint_ns = @checkpoint_ns
       ORDER BY checkpoint_id DESC LIMIT 1`,
    ),
    listThread: db.prepare<ListParams, CheckpointRow>(listSql(true)),
    listAll: db.prepare<ListParams, CheckpointRow>(listSql(false)),
    writes: db.prepare<CheckpointKey, WriteRow>(`SELECT ${CHECKPOINT_WRITE_COLUMNS} FROM checkpoint_writes WHERE ${BY_KEY}`),
    // One primary key lookup per channel of the checkpoint, in one statement
    // (CROSS JOIN keeps json_each outermost; otherwise SQLite scans the thread's blobs).
    blobs: db.prepare<BlobsParams, Pick<BlobRow, "channel" | "type" | "blob">>(
      `SELECT b.channel, b.type, b.blob FROM json_each(@versions) AS v
       CROSS JOIN checkpoint_blobs AS b ON b.thread_id = @thread_id AND b.checkpoint_ns = @checkpoint_ns
         AND b.channel = v.key AND b.version = v.value`,
    ),
    // Both run inside a group commit's transaction (a savepoint of their own when they share it).
    put: (row: CheckpointRow & { created_at: string }, blobs: BlobRow[]) => {
      for (const blob of blobs) putBlob.run(blob);
      putCheckpoint.run(row);
    },
    putWrites: (rows: WriteRow[]) => {
      // Special writes (errors, interrupts...) have fixed negative indexes and
      // must reflect the latest attempt; regular writes are kept from the first.
      for (const row of rows) (row.idx < 0 ? replaceWrite : keepWrite).run(row);
    },
    latestPerNamespace: db.prepare<[string], LatestRow>(
      `SELECT checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints AS c
       WHERE thread_id = ? AND checkpoint_id =
         (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = c.thread_id AND checkpoint_ns = c.checkpoint_ns)`,
    ),
    keepLatest: db.transaction((threadId: string, kept: KeptCheckpoint[]) => {
      for (const { versions, ...key } of kept) {
        const params = { thread_id: threadId, ...key, versions: JSON.stringify(versions) };
        deleteOlderWrites.run(params);
        deleteOlderCheckpoints.run(params);
        clearParent.run(params);
        deleteOlderBlobs.run(params);
      }
    }),
  };
}

/**
 * LangGraph checkpointer over Berth's SQLite database. better-sqlite3 is
 * synchronous; methods are async only because the interface is.
 *
 * Stored like the official Postgres saver: a checkpoint row holds the
 * checkpoint without its channel_values; each channel value is a row of
 * checkpoint_blobs keyed by (thread, namespace, channel, version), written only
 * by the put that advanced that channel's version (newVersions), and shared by
 * every later checkpoint whose channel_versions still name it.
 */
export class SqliteCheckpointer extends BaseCheckpointSaver {
  private readonly sql: ReturnType<typeof prepare>;
  private readonly group: GroupCommit;
  private readonly tables: SqliteCheckpointTables;

  constructor(db: SqliteDatabase, serde?: SerializerProtocol) {
    super(serde);
    this.sql = prepare(db);
    this.tables = new SqliteCheckpointTables(db);
    this.group = groupCommitOf(db);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const thread_id = config.configurable?.thread_id ?? null;
    const checkpoint_ns = config.configurable?.checkpoint_ns ?? "";
    const checkpoint_id = getCheckpointId(config);
    this.group.flush(checkpointsTopic(thread_id));
    const row = checkpoint_id
      ? this.sql.getById.get({ thread_id, checkpoint_ns, checkpoint_id })
      : this.sql.getLatest.get({ thread_id, checkpoint_ns });
    return row && this.toTuple(row);
  }

  override async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options;
    const params: ListParams = {
      thread_id: config.configurable?.thread_id || null,
      checkpoint_ns: config.configurable?.checkpoint_ns ?? null,
      checkpoint_id: config.configurable?.checkpoint_id || null,
      before: before?.configurable?.checkpoint_id || null,
      filter: filter ? JSON.stringify(filter) : null,
      limit: limit === undefined ? -1 : Math.max(0, limit),
    };
    // Rows are fetched up front: an open iterator would block writes on the connection across yields.
    this.group.flush(params.thread_id === null ? undefined : checkpointsTopic(params.thread_id));
    const rows = (params.thread_id === null ? this.sql.listAll : this.sql.listThread).all(params);
    for (const row of rows) yield await this.toTuple(row);
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const { row: encoded, blobs } = await encodePut(this.serde, config, checkpoint, newVersions);
    const row = { ...encoded, metadata: JSON.stringify(metadata) }; // stored as given, so json_contains/json_extract can query it
    await this.group.run(() => this.sql.put(row, blobs), checkpointsTopic(row.thread_id));
    return { configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const rows = await encodeWrites(this.serde, config, writes, taskId, taskPath);
    await this.group.run(() => this.sql.putWrites(rows), checkpointsTopic(config.configurable?.thread_id));
  }

  /**
   * Versions are strings, as in the Postgres saver (see nextChannelVersion).
   * Typed as numbers only because LangGraph takes a `BaseCheckpointSaver`
   * (numeric versions by default); it handles string versions at run time.
   */
  override getNextVersion(current: string | number | undefined): number {
    return nextChannelVersion(current) as unknown as number;
  }

  override async deleteThread(threadId: string): Promise<void> {
    this.tables.deleteThread(threadId);
  }

  copyThread(sourceThreadId: string, targetThreadId: string): void {
    this.tables.copyThread(sourceThreadId, targetThreadId);
  }

  deleteRun(threadId: string, runId: string): void {
    this.tables.deleteRun(threadId, runId);
  }

  async keepLatest(threadId: string): Promise<void> {
    const kept = await keptCheckpoints(this.serde, this.sql.latestPerNamespace.all(threadId));
    this.sql.keepLatest.immediate(threadId, kept);
  }

  private async toTuple(row: CheckpointRow): Promise<CheckpointTuple> {
    const { thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id } = row;
    const stored: Omit<Checkpoint, "channel_values"> = await this.serde.loadsTyped(row.type, row.checkpoint);
    const blobs = this.sql.blobs.all({ thread_id, checkpoint_ns, versions: versionsParam(stored.channel_versions) });
    const checkpoint: Checkpoint = { ...stored, channel_values: await loadChannelValues(this.serde, blobs) };
    const parentKey =
      parent_checkpoint_id === null ? undefined : { thread_id, checkpoint_ns, checkpoint_id: parent_checkpoint_id };
    if (checkpoint.v < 4 && parentKey) await this.migratePendingSends(checkpoint, parentKey);
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id, checkpoint_ns, checkpoint_id } },
      checkpoint,
      metadata: JSON.parse(row.metadata) as CheckpointMetadata,
      pendingWrites: await this.loadWrites({ thread_id, checkpoint_ns, checkpoint_id }),
    };
    if (parentKey) tuple.parentConfig = { configurable: parentKey };
    return tuple;
  }

  private async loadWrites(key: CheckpointKey, channel?: string): Promise<CheckpointPendingWrite[]> {
    const rows = this.sql.writes.all(key).filter((w) => channel === undefined || w.channel === channel);
    return loadWrites(this.serde, rows);
  }

  /** Checkpoints before format v4 kept pending sends as TASKS writes of their parent. */
  private async migratePendingSends(checkpoint: Checkpoint, parentKey: CheckpointKey): Promise<void> {
    const sends = (await this.loadWrites(parentKey, TASKS)).map(([, , value]) => value);
    checkpoint.channel_values ??= {};
    checkpoint.channel_values[TASKS] = sends;
    checkpoint.channel_versions ??= {};
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}

/** The group-commit topic of a thread's checkpoints, writes and channel values. */
function checkpointsTopic(threadId: unknown): string {
  return `checkpoints:${String(threadId)}`;
}
