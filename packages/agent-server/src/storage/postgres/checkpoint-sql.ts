// The checkpoint tables' statements. Each write is one statement (CTEs for
// the multi-table ones), so it is atomic without an explicit transaction and
// can also run on a client inside a caller's transaction (thread delete/copy).
import type {
  BlobRow,
  Bytes,
  CheckpointKey,
  CheckpointRow,
  KeptCheckpoint,
  LatestRow,
  WriteRow,
} from "../shared/checkpoint-rows.js";
import { CHECKPOINT_BLOB_COLUMNS, CHECKPOINT_COLUMNS, CHECKPOINT_WRITE_COLUMNS, qualified } from "../shared/columns.js";
import type { Queryable } from "./database.js";
import { prepared } from "./prepared.js";
import { jsonb } from "@berth/service-kit";

/** Checkpoint rows as CheckpointRow: metadata as JSON text, which toTuple parses. */
const SELECT_ROW = `SELECT ${CHECKPOINT_COLUMNS}, metadata::text AS metadata FROM checkpoints`;
const OF_RUN = "thread_id = $1 AND metadata ->> 'run_id' = $2";

/** A string from serde becomes its UTF-8 bytes: pg would read a string bound to bytea as bytea escape text. */
const toBuffer = (bytes: Bytes | null): Uint8Array | null => (typeof bytes === "string" ? Buffer.from(bytes) : bytes);

export type ListFilter = {
  [key in "thread_id" | "checkpoint_ns" | "checkpoint_id" | "before"]: string | null;
} & { filter: Record<string, unknown> | null; limit: number | null };

/** A checkpoint with its channel values and pending writes, read in one round trip (selectTuple). */
export interface TupleRows {
  row: CheckpointRow;
  /** The channel versions the blobs were looked up by; null when the statement could not read them (not JSON). */
  versions: Record<string, string> | null;
  blobs: Pick<BlobRow, "channel" | "type" | "blob">[];
  writes: WriteRow[];
}

type TupleRow = CheckpointRow & {
  versions: Record<string, string> | null;
  blob_channels: string[] | null;
  blob_types: string[] | null;
  blob_values: (Buffer | null)[] | null;
  write_task_ids: string[] | null;
  write_task_paths: string[] | null;
  write_idxs: number[] | null;
  write_channels: string[] | null;
  write_types: string[] | null;
  write_values: (Buffer | null)[] | null;
};

/**
 * The checkpoint (by id, or the thread's latest in the namespace) with the blobs of the channel versions it names
 * and its pending writes, in one statement: the versions are read from the serialized checkpoint when it is JSON
 * (as the JSON serializer writes it); otherwise `versions` is null and the caller loads the blobs itself.
 */
export async function selectTuple(
  q: Queryable,
  threadId: string,
  ns: string,
  checkpointId: string | undefined,
): Promise<TupleRows | undefined> {
  const which = checkpointId === undefined ? "latest" : "by_id";
  const where =
    checkpointId === undefined
      ? "thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1"
      : "thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3";
  const { rows } = await prepared<TupleRow>(
    q,
    `berth_select_tuple_${which}`,
    // Lookups per channel and per key (`OFFSET 0`), as selectBlobs and selectWrites do.
    `WITH c AS MATERIALIZED (${SELECT_ROW} WHERE ${where}),
     v AS MATERIALIZED (
       SELECT CASE WHEN c.type = 'json' THEN convert_from(c.checkpoint, 'UTF8')::jsonb -> 'channel_versions' END AS versions FROM c
     )
     SELECT c.*, (SELECT jsonb_object_agg(e.key, e.value) FROM v, jsonb_each_text(v.versions) AS e) AS versions,
            b.channels AS blob_channels, b.types AS blob_types, b.blobs AS blob_values,
            w.task_ids AS write_task_ids, w.task_paths AS write_task_paths, w.idxs AS write_idxs,
            w.channels AS write_channels, w.types AS write_types, w.vals AS write_values
       FROM c
       CROSS JOIN LATERAL (
         SELECT array_agg(b.channel) AS channels, array_agg(b.type) AS types, array_agg(b.blob) AS blobs
           FROM v, jsonb_each_text(CASE WHEN jsonb_typeof(v.versions) = 'object' THEN v.versions END) AS e
           CROSS JOIN LATERAL (
             SELECT b.channel, b.type, b.blob FROM checkpoint_blobs b
              WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = e.key AND b.version = e.value
             OFFSET 0
           ) AS b
       ) AS b
       CROSS JOIN LATERAL (
         SELECT array_agg(w.task_id) AS task_ids, array_agg(w.task_path) AS task_paths, array_agg(w.idx::int) AS idxs,
                array_agg(w.channel) AS channels, array_agg(w.type) AS types, array_agg(w.value) AS vals
           FROM (SELECT * FROM checkpoint_writes
                  WHERE thread_id = c.thread_id AND checkpoint_ns = c.checkpoint_ns AND checkpoint_id = c.checkpoint_id
                 OFFSET 0) AS w
       ) AS w`,
    checkpointId === undefined ? [threadId, ns] : [threadId, ns, checkpointId],
  );
  const found = rows[0];
  if (!found) return undefined;
  const { thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata } = found;
  const key = { thread_id, checkpoint_ns, checkpoint_id };
  return {
    row: { ...key, parent_checkpoint_id, type, checkpoint, metadata },
    versions: found.versions,
    blobs: (found.blob_channels ?? []).map((channel, i) => ({
      channel,
      type: found.blob_types![i],
      blob: found.blob_values![i],
    })),
    writes: (found.write_task_ids ?? []).map((task_id, i) => ({
      ...key,
      task_id,
      task_path: found.write_task_paths![i],
      idx: found.write_idxs![i],
      channel: found.write_channels![i],
      type: found.write_types![i],
      value: found.write_values![i] as Bytes,
    })),
  };
}

/** Checkpoints matching a `list` call, newest first; a null condition is not applied (LIMIT NULL: no limit). */
export async function selectList(q: Queryable, list: ListFilter): Promise<CheckpointRow[]> {
  const params: unknown[] = [];
  const clauses: string[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  if (list.thread_id !== null) clauses.push(`thread_id = ${param(list.thread_id)}`);
  if (list.checkpoint_ns !== null) clauses.push(`checkpoint_ns = ${param(list.checkpoint_ns)}`);
  if (list.checkpoint_id !== null) clauses.push(`checkpoint_id = ${param(list.checkpoint_id)}`);
  if (list.before !== null) clauses.push(`checkpoint_id < ${param(list.before)}`);
  if (list.filter !== null) clauses.push(`metadata @> ${param(jsonb(list.filter))}::jsonb`);
  const where = clauses.length ? `WHERE ${clauses.join(" AND ")}` : "";
  const { rows } = await q.query<CheckpointRow>(
    `${SELECT_ROW} ${where} ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns LIMIT ${param(list.limit)}`,
    params,
  );
  return rows;
}

/** Per checkpoint (by index in `owners`), the blob rows of the channel versions it names. */
export async function selectBlobs(
  q: Queryable,
  owners: { thread_id: string; checkpoint_ns: string; versions: Record<string, string> }[],
): Promise<Pick<BlobRow, "channel" | "type" | "blob">[][]> {
  const keys = owners.map((owner, i) => ({ i, t: owner.thread_id, n: owner.checkpoint_ns, v: owner.versions }));
  // One primary key lookup per (checkpoint, channel), for every checkpoint at once. `OFFSET 0` keeps each a
  // lookup: as a plain join, young statistics (a new database) planned a scan of the whole table per load.
  const { rows } = await prepared<Pick<BlobRow, "channel" | "type" | "blob"> & { i: number }>(
    q,
    "berth_select_blobs",
    `SELECT k.i, b.channel, b.type, b.blob
       FROM jsonb_to_recordset($1::jsonb) AS k(i integer, t text, n text, v jsonb)
       CROSS JOIN LATERAL jsonb_each_text(k.v) AS v
       CROSS JOIN LATERAL (
         SELECT b.channel, b.type, b.blob FROM checkpoint_blobs b
          WHERE b.thread_id = k.t AND b.checkpoint_ns = k.n AND b.channel = v.key AND b.version = v.value OFFSET 0
       ) AS b`,
    [jsonb(keys)],
  );
  const byOwner = owners.map((): Pick<BlobRow, "channel" | "type" | "blob">[] => []);
  for (const { i, ...row } of rows) byOwner[i].push(row);
  return byOwner;
}

/** Per checkpoint key (by index), its pending writes, optionally of one channel only. */
export async function selectWrites(q: Queryable, keys: CheckpointKey[], channel?: string): Promise<WriteRow[][]> {
  const indexed = keys.map((key, i) => ({ i, t: key.thread_id, n: key.checkpoint_ns, c: key.checkpoint_id }));
  const { rows } = await prepared<WriteRow & { i: number }>(
    q,
    "berth_select_writes",
    // A lookup per key (`OFFSET 0`, as for blobs): analyzed statistics had planned a scan of every write per load.
    `SELECT k.i, ${qualified("w", CHECKPOINT_WRITE_COLUMNS)}
       FROM jsonb_to_recordset($1::jsonb) AS k(i integer, t text, n text, c text)
       CROSS JOIN LATERAL (
         SELECT ${CHECKPOINT_WRITE_COLUMNS} FROM checkpoint_writes
          WHERE thread_id = k.t AND checkpoint_ns = k.n AND checkpoint_id = k.c AND ($2::text IS NULL OR channel = $2)
         OFFSET 0
       ) AS w`,
    [jsonb(indexed), channel ?? null],
  );
  const byKey = keys.map((): WriteRow[] => []);
  for (const { i, ...row } of rows) byKey[i].push(row);
  return byKey;
}

/** A checkpoint as `put` stores it: its row (metadata as JSONB text) and the channel values it changed. */
export type CheckpointInsert = { row: CheckpointRow & { created_at: string }; blobs: BlobRow[] };

/**
 * The checkpoint with the blobs of the channels it advanced. A (channel,
 * version) names one value, so an existing blob is already right; re-putting
 * a checkpoint id replaces its content but keeps its creation time.
 */
export async function insertCheckpoint(q: Queryable, { row, blobs }: CheckpointInsert): Promise<void> {
  await prepared(
    q,
    "berth_insert_checkpoint",
    `WITH blobs AS (
       INSERT INTO checkpoint_blobs (${CHECKPOINT_BLOB_COLUMNS})
       SELECT $1, $2, b.channel, b.version, b.type, b.blob
         FROM unnest($9::text[], $10::text[], $11::text[], $12::bytea[]) AS b(channel, version, type, blob)
       ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
     )
     INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}, metadata, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
       parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
       checkpoint = excluded.checkpoint, metadata = excluded.metadata`,
    [
      row.thread_id,
      row.checkpoint_ns,
      row.checkpoint_id,
      row.parent_checkpoint_id,
      row.type,
      toBuffer(row.checkpoint),
      row.metadata,
      row.created_at,
      blobs.map((b) => b.channel),
      blobs.map((b) => b.version),
      blobs.map((b) => b.type),
      blobs.map((b) => toBuffer(b.blob)),
    ],
  );
}

/**
 * Special writes (errors, interrupts...) have fixed negative indexes and must
 * reflect the latest attempt; regular writes are kept from the first. Rows
 * sent together are deduplicated first (the last special write of a key wins),
 * as one INSERT may not update the same row twice.
 */
function uniqueWrites(rows: WriteRow[]): WriteRow[] {
  const byKey = new Map<string, WriteRow>();
  for (const row of rows) {
    const key = JSON.stringify([row.thread_id, row.checkpoint_ns, row.checkpoint_id, row.task_id, row.idx]);
    if (row.idx < 0 || !byKey.has(key)) byKey.set(key, row);
  }
  return [...byKey.values()];
}

const INSERT_WRITES = `INSERT INTO checkpoint_writes (${CHECKPOINT_WRITE_COLUMNS})
     SELECT ${CHECKPOINT_WRITE_COLUMNS}
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::text[], $8::text[], $9::bytea[])
         AS w(${CHECKPOINT_WRITE_COLUMNS})
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
       task_path = excluded.task_path, channel = excluded.channel, type = excluded.type, value = excluded.value
     WHERE excluded.idx < 0`;

/** The statement parameters of write rows, one array a column ($1–$9 of INSERT_WRITES). */
function writeColumns(rows: WriteRow[]): unknown[] {
  return [
    ...columnsOf(rows, ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "idx", "channel", "type"]),
    rows.map((row) => toBuffer(row.value)),
  ];
}

/** One array of values a column, for statements that insert rows from unnest(...). */
function columnsOf<T>(rows: T[], names: (keyof T)[]): unknown[][] {
  return names.map((name) => rows.map((row) => row[name]));
}

export async function insertWrites(q: Queryable, rows: WriteRow[]): Promise<void> {
  const unique = uniqueWrites(rows);
  if (unique.length === 0) return;
  await prepared(q, "berth_insert_writes", INSERT_WRITES, writeColumns(unique));
}

/**
 * Checkpoints (with their channel values) and writes of several calls as one
 * statement, with each call's effect: a checkpoint put again replaces the one
 * before, as insertCheckpoint's conflict does; writes as insertWrites keeps them.
 */
export async function insertCheckpointBatch(q: Queryable, checkpoints: CheckpointInsert[], writes: WriteRow[]): Promise<void> {
  const latest = new Map<string, CheckpointInsert["row"]>();
  for (const { row } of checkpoints) latest.set(JSON.stringify([row.thread_id, row.checkpoint_ns, row.checkpoint_id]), row);
  const rows = [...latest.values()];
  const blobs = checkpoints.flatMap((checkpoint) => checkpoint.blobs);
  await prepared(
    q,
    "berth_insert_checkpoint_batch",
    `WITH writes AS (${INSERT_WRITES}),
     blobs AS (
       INSERT INTO checkpoint_blobs (${CHECKPOINT_BLOB_COLUMNS})
       SELECT * FROM unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bytea[])
       ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
     )
     INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}, metadata, created_at)
     SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint,
            c.metadata::jsonb, c.created_at::timestamptz
       FROM unnest($16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::bytea[], $22::text[], $23::text[])
         AS c(${CHECKPOINT_COLUMNS}, metadata, created_at)
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
       parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
       checkpoint = excluded.checkpoint, metadata = excluded.metadata`,
    [
      ...writeColumns(uniqueWrites(writes)),
      ...columnsOf(blobs, ["thread_id", "checkpoint_ns", "channel", "version", "type"]),
      blobs.map((b) => toBuffer(b.blob)),
      ...columnsOf(rows, ["thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type"]),
      rows.map((row) => toBuffer(row.checkpoint)),
      ...columnsOf(rows, ["metadata", "created_at"]),
    ],
  );
}

/** Deletes the checkpoints, writes and channel values of a thread. */
export async function deleteThreadCheckpoints(q: Queryable, threadId: string): Promise<void> {
  await q.query(
    `WITH writes AS (DELETE FROM checkpoint_writes WHERE thread_id = $1),
          blobs AS (DELETE FROM checkpoint_blobs WHERE thread_id = $1)
     DELETE FROM checkpoints WHERE thread_id = $1`,
    [threadId],
  );
}

/** Copies every checkpoint, write and channel value of a thread to a thread id that has none yet. */
export async function copyThreadCheckpoints(q: Queryable, source: string, target: string): Promise<void> {
  await q.query(
    `WITH writes AS (
       INSERT INTO checkpoint_writes (${CHECKPOINT_WRITE_COLUMNS})
       SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
         FROM checkpoint_writes WHERE thread_id = $1
     ), blobs AS (
       INSERT INTO checkpoint_blobs (${CHECKPOINT_BLOB_COLUMNS})
       SELECT $2, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1
     )
     INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}, metadata, created_at)
     SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
       CASE WHEN metadata ? 'thread_id' THEN jsonb_set(metadata, '{thread_id}', to_jsonb($2::text)) ELSE metadata END,
       created_at
     FROM checkpoints WHERE thread_id = $1`,
    [source, target],
  );
}

/**
 * Deletes the checkpoints written by one run (metadata.run_id) and their
 * writes (the CTE sees the checkpoints before the main statement deletes them).
 * Blobs stay: they belong to (channel, version) pairs, which checkpoints of
 * other runs (later ones, forks, copies via "__copy__") may still reference.
 */
export async function deleteRunCheckpoints(q: Queryable, threadId: string, runId: string): Promise<void> {
  await q.query(
    `WITH writes AS (
       DELETE FROM checkpoint_writes WHERE thread_id = $1 AND (checkpoint_ns, checkpoint_id) IN
         (SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE ${OF_RUN})
     )
     DELETE FROM checkpoints WHERE ${OF_RUN}`,
    [threadId, runId],
  );
}

/** The newest checkpoint of each namespace of a thread. */
export async function selectLatestPerNamespace(q: Queryable, threadId: string): Promise<LatestRow[]> {
  const { rows } = await q.query<LatestRow>(
    `SELECT DISTINCT ON (checkpoint_ns) checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints
      WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id DESC`,
    [threadId],
  );
  return rows;
}

/**
 * Deletes, per namespace, what is older than the kept checkpoint: checkpoints,
 * their writes, and channel versions below those it names (versions sort by
 * their zero-padded counter, so newer ones a running graph writes meanwhile
 * stay); the kept checkpoint's parent link is cleared.
 */
export async function keepLatestCheckpoints(q: Queryable, threadId: string, kept: KeptCheckpoint[]): Promise<void> {
  if (kept.length === 0) return;
  const keys = kept.map((k) => ({ n: k.checkpoint_ns, c: k.checkpoint_id, v: k.versions }));
  await q.query(
    `WITH k AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS k(n text, c text, v jsonb)),
     writes AS (
       DELETE FROM checkpoint_writes w USING k
        WHERE w.thread_id = $1 AND w.checkpoint_ns = k.n AND w.checkpoint_id < k.c
     ), blobs AS (
       DELETE FROM checkpoint_blobs b USING k, jsonb_each_text(k.v) AS v
        WHERE b.thread_id = $1 AND b.checkpoint_ns = k.n AND b.channel = v.key AND b.version < v.value
     ), parents AS (
       UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM k
        WHERE c.thread_id = $1 AND c.checkpoint_ns = k.n AND c.checkpoint_id = k.c
     )
     DELETE FROM checkpoints c USING k WHERE c.thread_id = $1 AND c.checkpoint_ns = k.n AND c.checkpoint_id < k.c`,
    [threadId, jsonb(keys)],
  );
}
