import { jsonb } from "@berth/service-kit";
import type pg from "pg";
import type {
  NamespaceQuery,
  StoreItemRecord,
  StorePut,
  StoreRepository,
  StoreSearchHit,
  StoreSearchQuery,
  StoreSize,
} from "../memory-store-types.js";
import type { JsonObject } from "../types.js";
import { qualified, STORE_ITEM_COLUMNS } from "../shared/columns.js";
import { orderedType, type StoreCondition, storeConditions } from "../shared/memory-store-filter.js";
import {
  itemNamespace,
  joinNamespace,
  literalPrefix,
  pageNamespaces,
  prefixRange,
  splitNamespace,
} from "../shared/memory-store-namespaces.js";
import { encodeVector, VectorRanking } from "../shared/memory-store-vectors.js";
import { LATEST_MS, msAfterMinutes } from "../shared/timestamps.js";
import { withTransaction } from "./database.js";

interface ItemRow {
  namespace: string;
  key: string;
  value: JsonObject;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  ttl_minutes: number | null;
}

interface Hit {
  row: ItemRow;
  score: number | null;
}

function fromRow(row: ItemRow): StoreItemRecord {
  return {
    namespace: splitNamespace(row.namespace),
    key: row.key,
    value: row.value,
    created_at: row.created_at,
    updated_at: row.updated_at,
    expires_at: row.expires_at,
    ttl_minutes: row.ttl_minutes,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Now (the placeholder of a parameter in epoch ms) + ttl_minutes, computed as
 * msAfterMinutes does, so a refresh here expires when SQLite's would.
 */
const refreshedExpiry = (nowMsParam: string) =>
  `to_timestamp(LEAST(GREATEST(floor(${nowMsParam}::float8 + ttl_minutes * 60000), 0), ${LATEST_MS}) / 1000)`;

const COMPARISONS = { $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" } as const;

/** One filter condition as SQL on the items aliased `i`, with the semantics of matchesConditions (shared/memory-store-filter.ts). */
function conditionSql({ field, op, value }: StoreCondition, param: (value: unknown) => string): string {
  const type = orderedType(value);
  // Before any parameter: one the statement does not use would have no type.
  if (op !== "$eq" && op !== "$ne" && type === undefined) return "FALSE";
  const name = `${param(field)}::text`;
  const path = `i.value -> ${name}`;
  // A missing field is SQL NULL: equal to nothing, distinct from everything.
  if (op === "$eq") return `${path} = ${param(jsonb(value))}::jsonb`;
  if (op === "$ne") return `${path} IS DISTINCT FROM ${param(jsonb(value))}::jsonb`;
  const compare = COMPARISONS[op];
  // JSONB would order values of different types, and strings by the database's collation: neither is wanted.
  if (type === "string") {
    return `(jsonb_typeof(${path}) = 'string' AND (i.value ->> ${name}) COLLATE "C" ${compare} ${param(value)}::text)`;
  }
  return `(jsonb_typeof(${path}) = '${type}' AND ${path} ${compare} ${param(jsonb(value))}::jsonb)`;
}

/** What a read keeps of the items aliased `i` (prefix on the `namespace` column given); parameters go to `params`. */
function scopeSql(namespace: string, prefix: string[], conditions: StoreCondition[], now: string, params: unknown[]): string {
  const param = (value: unknown) => `$${params.push(value)}`;
  // Live: an expired item is gone for reads before the sweeper deletes it.
  const clauses = [`(i.expires_at IS NULL OR i.expires_at > ${param(now)}::timestamptz)`];
  const range = prefixRange(prefix);
  if (range) {
    const exact = param(range.exact);
    clauses.push(
      `${namespace} >= ${exact} AND ${namespace} < ${param(range.end)} AND (${namespace} = ${exact} OR ${namespace} >= ${param(range.descendants)})`,
    );
  }
  for (const condition of conditions) clauses.push(conditionSql(condition, param));
  return clauses.join(" AND ");
}

/** A map key of an item (PostgreSQL text holds no U+0000). */
const itemKey = (namespace: string, key: string) => `${namespace}\u0000${key}`;

export class PostgresStoreRepository implements StoreRepository {
  constructor(private readonly pool: pg.Pool) {}

  async get(namespace: string[], key: string, refreshTtl: boolean): Promise<StoreItemRecord | undefined> {
    const text = joinNamespace(namespace);
    const nowMs = Date.now();
    if (refreshTtl) {
      const { rows } = await this.pool.query<ItemRow>(
        `UPDATE store_items SET expires_at = ${refreshedExpiry("$3")}
         WHERE namespace = $1 AND key = $2 AND ttl_minutes IS NOT NULL AND (expires_at IS NULL OR expires_at > $4)
         RETURNING ${STORE_ITEM_COLUMNS}`,
        [text, key, nowMs, iso(nowMs)],
      );
      if (rows[0]) return fromRow(rows[0]);
      // Absent, expired, or without a ttl to refresh: read as is.
    }
    const { rows } = await this.pool.query<ItemRow>(
      `SELECT ${STORE_ITEM_COLUMNS} FROM store_items WHERE namespace = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > $3)`,
      [text, key, iso(nowMs)],
    );
    return rows[0] && fromRow(rows[0]);
  }

  async put(item: StorePut): Promise<void> {
    const namespace = itemNamespace(item.namespace);
    const nowMs = Date.now();
    const expiresAt = item.ttlMinutes === null ? null : iso(msAfterMinutes(nowMs, item.ttlMinutes));
    const fields = item.vectors.map((vector) => vector.field);
    const vectors = item.vectors.map((vector) => encodeVector(vector.vector));
    // The upsert locks the item's row first: concurrent puts of one item take turns, the last one's vectors stay.
    await withTransaction(this.pool, async (client) => {
      // A replaced item keeps its created_at, unless it had expired: then it is a new item.
      await client.query(
        `INSERT INTO store_items (namespace, key, value, created_at, updated_at, expires_at, ttl_minutes)
         VALUES ($1, $2, $3::jsonb, $4, $4, $5, $6)
         ON CONFLICT (namespace, key) DO UPDATE SET
           value = excluded.value, updated_at = excluded.updated_at,
           expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes,
           created_at = CASE WHEN store_items.expires_at <= excluded.updated_at THEN excluded.created_at
                             ELSE store_items.created_at END`,
        [namespace, item.key, jsonb(item.value), iso(nowMs), expiresAt, item.ttlMinutes],
      );
      await client.query("DELETE FROM store_vectors WHERE namespace = $1 AND key = $2", [namespace, item.key]);
      if (vectors.length === 0) return;
      await client.query(
        `INSERT INTO store_vectors (namespace, key, idx, field, vector)
         SELECT $1, $2, t.idx - 1, t.field, t.vector FROM unnest($3::text[], $4::bytea[]) WITH ORDINALITY AS t (field, vector, idx)`,
        [namespace, item.key, fields, vectors],
      );
    });
  }

  async delete(namespace: string[], key: string): Promise<void> {
    // Its vectors go with it (ON DELETE CASCADE).
    await this.pool.query("DELETE FROM store_items WHERE namespace = $1 AND key = $2", [joinNamespace(namespace), key]);
  }

  async search(query: StoreSearchQuery): Promise<StoreSearchHit[]> {
    const conditions = storeConditions(query.filter);
    const nowMs = Date.now();
    const hits = query.vector
      ? await this.nearest(query, query.vector, conditions, nowMs)
      : await this.newest(query, conditions, nowMs);
    if (query.refreshTtl) await this.refresh(hits, nowMs);
    return hits.map(({ row, score }) => ({ ...fromRow(row), score }));
  }

  async listNamespaces(query: NamespaceQuery): Promise<string[][]> {
    const params: unknown[] = [];
    const where = scopeSql("i.namespace", literalPrefix(query.prefix), [], iso(Date.now()), params);
    const { rows } = await this.pool.query<{ namespace: string }>(
      `SELECT DISTINCT i.namespace FROM store_items i WHERE ${where}`,
      params,
    );
    return pageNamespaces(
      rows.map((row) => row.namespace),
      query,
    );
  }

  async sweepExpired(limit: number): Promise<number> {
    // One process sweeps at a time (a transaction lock the others fail to take: they sweep nothing this time);
    // SKIP LOCKED: the sweep never waits behind a put.
    const { rowCount } = await this.pool.query(
      `DELETE FROM store_items WHERE (namespace, key) IN (
         SELECT namespace, key FROM store_items WHERE pg_try_advisory_xact_lock(hashtext('berth:sweep:store'))
           AND expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [iso(Date.now()), limit],
    );
    return rowCount ?? 0;
  }

  async size(): Promise<StoreSize> {
    const now = iso(Date.now());
    const { rows } = await this.pool.query<StoreSize>(
      `SELECT count(*) AS items,
         coalesce(sum(pg_column_size(i.value)), 0)::bigint
         + (SELECT coalesce(sum(pg_column_size(v.vector)), 0) FROM store_vectors v
            JOIN store_items j ON j.namespace = v.namespace AND j.key = v.key
            WHERE j.expires_at IS NULL OR j.expires_at > $1)::bigint AS bytes
       FROM store_items i WHERE i.expires_at IS NULL OR i.expires_at > $1`,
      [now],
    );
    return rows[0];
  }

  private async newest(query: StoreSearchQuery, conditions: StoreCondition[], nowMs: number): Promise<Hit[]> {
    const params: unknown[] = [];
    const where = scopeSql("i.namespace", query.namespacePrefix, conditions, iso(nowMs), params);
    const { rows } = await this.pool.query<ItemRow>(
      `SELECT ${qualified("i", STORE_ITEM_COLUMNS)} FROM store_items i WHERE ${where}
       ORDER BY i.updated_at DESC, i.namespace, i.key LIMIT $${params.push(query.limit)} OFFSET $${params.push(query.offset)}`,
      params,
    );
    return rows.map((row) => ({ row, score: null }));
  }

  private async nearest(query: StoreSearchQuery, vector: number[], conditions: StoreCondition[], nowMs: number): Promise<Hit[]> {
    const ranking = new VectorRanking(vector);
    const params: unknown[] = [ranking.byteLength];
    const where = scopeSql("v.namespace", query.namespacePrefix, conditions, iso(nowMs), params);
    // One snapshot for the ranking and the items it returns: a put in between cannot swap an item's value under its score.
    return withTransaction(this.pool, async (client) => {
      await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
      const candidates = await client.query<{ namespace: string; key: string; vector: Buffer }>(
        `SELECT v.namespace, v.key, v.vector FROM store_vectors v
         JOIN store_items i ON i.namespace = v.namespace AND i.key = v.key
         WHERE length(v.vector) = $1 AND ${where}`,
        params,
      );
      for (const candidate of candidates.rows) ranking.offer(candidate.namespace, candidate.key, candidate.vector);
      const page = ranking.page(query.limit, query.offset);
      if (page.length === 0) return [];
      const { rows } = await client.query<ItemRow>(
        `SELECT ${qualified("i", STORE_ITEM_COLUMNS)} FROM store_items i
         JOIN unnest($1::text[], $2::text[]) AS p (namespace, key) ON i.namespace = p.namespace AND i.key = p.key`,
        [page.map((hit) => hit.namespace), page.map((hit) => hit.key)],
      );
      const items = new Map(rows.map((row) => [itemKey(row.namespace, row.key), row]));
      return page.flatMap((hit) => {
        const row = items.get(itemKey(hit.namespace, hit.key));
        return row ? [{ row, score: hit.score }] : [];
      });
    });
  }

  /** Pushes the expiry of the hits that have a ttl to now + ttl (and updates the hits given). */
  private async refresh(hits: Hit[], nowMs: number): Promise<void> {
    const rows = hits.map((hit) => hit.row).filter((row) => row.ttl_minutes !== null);
    if (rows.length === 0) return;
    const refreshed = await this.pool.query<{ namespace: string; key: string; expires_at: string }>(
      `UPDATE store_items i SET expires_at = ${refreshedExpiry("$3")}
       FROM unnest($1::text[], $2::text[]) AS r (namespace, key)
       WHERE i.namespace = r.namespace AND i.key = r.key AND i.ttl_minutes IS NOT NULL
         AND (i.expires_at IS NULL OR i.expires_at > $4)
       RETURNING i.namespace, i.key, i.expires_at`,
      [rows.map((row) => row.namespace), rows.map((row) => row.key), nowMs, iso(nowMs)],
    );
    const expiries = new Map(refreshed.rows.map((row) => [itemKey(row.namespace, row.key), row.expires_at]));
    for (const row of rows) row.expires_at = expiries.get(itemKey(row.namespace, row.key)) ?? row.expires_at;
  }
}
