// Row shapes of the checkpoint tables, and their encoding to and from what
// LangGraph's checkpointer interface deals in.
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  compareWritesSortKeys,
  writesSortKey,
  type Checkpoint,
  type ChannelVersions,
  type PendingWrite,
  WRITES_IDX_MAP,
  type CheckpointPendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";

export type CheckpointKey = { thread_id: string; checkpoint_ns: string; checkpoint_id: string };
export type Bytes = Uint8Array | string; // what serde produces; BLOBs read back as Buffers

/** A checkpoint without its channel_values, which live in checkpoint_blobs. */
export type CheckpointRow = CheckpointKey & {
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Bytes;
  metadata: string;
};

export type WriteRow = CheckpointKey & {
  task_id: string;
  task_path: string;
  idx: number;
  channel: string;
  type: string;
  value: Bytes;
};

/** One value of one channel, at the version a checkpoint's channel_versions names. */
export type BlobRow = {
  thread_id: string;
  checkpoint_ns: string;
  channel: string;
  version: string;
  type: string;
  blob: Bytes | null;
};

/**
 * Type of the blob of a channel version that has no value (the channel was
 * emptied, or is a delta channel that only stores snapshots), as the Postgres
 * saver writes it: the version exists, but contributes nothing to channel_values.
 */
const EMPTY = "empty";

/** Blob rows for the channels a put changed: those in newVersions, at their new version. */
export async function dumpBlobs(
  serde: SerializerProtocol,
  owner: { thread_id: string; checkpoint_ns: string },
  values: Record<string, unknown>,
  newVersions: ChannelVersions,
): Promise<BlobRow[]> {
  return Promise.all(
    Object.entries(newVersions).map(async ([channel, version]): Promise<BlobRow> => {
      const [type, blob] = Object.hasOwn(values, channel) ? await serde.dumpsTyped(values[channel]) : [EMPTY, null];
      return { ...owner, channel, version: String(version), type, blob };
    }),
  );
}

/** channel_versions as a JSON object of strings, to join with checkpoint_blobs.version (TEXT). */
export function versionsParam(versions: ChannelVersions | undefined): string {
  return JSON.stringify(Object.fromEntries(Object.entries(versions ?? {}).map(([k, v]) => [k, String(v)])));
}

/** channel_values rebuilt from the blobs of a checkpoint's channel versions. */
export async function loadChannelValues(
  serde: SerializerProtocol,
  rows: Pick<BlobRow, "channel" | "type" | "blob">[],
): Promise<Record<string, unknown>> {
  const entries = await Promise.all(
    rows
      .filter((row) => row.type !== EMPTY)
      .map(async (row) => [row.channel, await serde.loadsTyped(row.type, row.blob ?? "")] as const),
  );
  return Object.fromEntries(entries);
}

/** The writes of one checkpoint, in the order live execution applies them. */
export async function loadWrites(serde: SerializerProtocol, rows: WriteRow[]): Promise<CheckpointPendingWrite[]> {
  const sortKey = (w: WriteRow) => writesSortKey(w.task_path, w.task_id, w.idx);
  const sorted = [...rows].sort((a, b) => compareWritesSortKeys(sortKey(a), sortKey(b)));
  return Promise.all(
    sorted.map(async (w): Promise<CheckpointPendingWrite> => [w.task_id, w.channel, await serde.loadsTyped(w.type, w.value)]),
  );
}

/**
 * The version after `current`: `<counter, 32 digits>.<16 random hex digits>`,
 * like the Postgres saver's. The zero-padded counter keeps versions increasing
 * as strings (LangGraph compares them with `>`); the random part makes two
 * forks of a thread that advance a channel from the same version get different
 * versions, so their blobs never collide in checkpoint_blobs.
 */
export function nextChannelVersion(current: string | number | undefined): string {
  const counter = current === undefined ? 0 : typeof current === "number" ? current : Number.parseInt(current.split(".")[0], 10);
  // The suffix only orders concurrent writers' versions of one counter, as the official savers' random part does: no secret.
  return `${String(counter + 1).padStart(32, "0")}.${Math.random().toString(16).slice(2, 18).padEnd(16, "0")}`;
}

export const missing = (action: string, key: string) => new Error(`Failed to ${action}: config.configurable has no "${key}".`);

/**
 * What `put` stores, in either database: the checkpoint row (without its
 * channel values and metadata, which the caller encodes for its column type)
 * and the blobs of the channels that changed.
 */
export async function encodePut(
  serde: SerializerProtocol,
  config: RunnableConfig,
  checkpoint: Checkpoint,
  newVersions: ChannelVersions,
): Promise<{ row: Omit<CheckpointRow, "metadata"> & { created_at: string }; blobs: BlobRow[] }> {
  const thread_id = config.configurable?.thread_id;
  if (thread_id === undefined || thread_id === null) throw missing("put checkpoint", "thread_id");
  const checkpoint_ns: string = config.configurable?.checkpoint_ns ?? "";
  const { channel_values, ...rest } = checkpoint;
  const [type, blob] = await serde.dumpsTyped(rest);
  const blobs = await dumpBlobs(serde, { thread_id, checkpoint_ns }, channel_values ?? {}, newVersions ?? {});
  return {
    row: {
      thread_id,
      checkpoint_ns,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: config.configurable?.checkpoint_id || null,
      type,
      checkpoint: blob,
      created_at: new Date().toISOString(),
    },
    blobs,
  };
}

/** The rows a `putWrites` call stores, in either database. */
export async function encodeWrites(
  serde: SerializerProtocol,
  config: RunnableConfig,
  writes: PendingWrite[],
  taskId: string,
  taskPath: string,
): Promise<WriteRow[]> {
  const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
  if (thread_id === undefined || thread_id === null) throw missing("put writes", "thread_id");
  if (!checkpoint_id) throw missing("put writes", "checkpoint_id");
  return Promise.all(
    writes.map(async ([channel, value], i): Promise<WriteRow> => {
      const [type, blob] = await serde.dumpsTyped(value);
      return {
        thread_id,
        checkpoint_ns,
        checkpoint_id,
        task_id: taskId,
        task_path: taskPath,
        channel,
        type,
        idx: WRITES_IDX_MAP[channel] ?? i, // special channels get fixed negative indexes
        value: blob,
      };
    }),
  );
}

/** The newest checkpoint of one namespace, as `keepLatest` reads it before pruning what is older. */
export type LatestRow = Pick<CheckpointRow, "checkpoint_ns" | "checkpoint_id" | "type" | "checkpoint">;

/** What `keepLatest` keeps of a namespace: its newest checkpoint and the channel versions that checkpoint names. */
export type KeptCheckpoint = { checkpoint_ns: string; checkpoint_id: string; versions: Record<string, string> };

/** Decodes the channel versions of each namespace's newest checkpoint (they live inside the serialized checkpoint). */
export function keptCheckpoints(serde: SerializerProtocol, rows: LatestRow[]): Promise<KeptCheckpoint[]> {
  return Promise.all(
    rows.map(async (row) => {
      const stored: Pick<Checkpoint, "channel_versions"> = await serde.loadsTyped(row.type, row.checkpoint);
      const versions = JSON.parse(versionsParam(stored.channel_versions)) as Record<string, string>;
      return { checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id, versions };
    }),
  );
}
