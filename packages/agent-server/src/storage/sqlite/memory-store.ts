import type {
  NamespaceQuery,
  StoreItemRecord,
  StorePut,
  StoreRepository,
  StoreSearchHit,
  StoreSearchQuery,
  StoreSize,
} from "../memory-store-types.js";
import { STORE_ITEM_COLUMNS } from "../shared/columns.js";
import { type StoreCondition, storeConditions } from "../shared/memory-store-filter.js";
import {
  itemNamespace,
  joinNamespace,
  literalPrefix,
  pageNamespaces,
  prefixRange,
  splitNamespace,
} from "../shared/memory-store-namespaces.js";
import { encodeVector, VectorRanking } from "../shared/memory-store-vectors.js";
import { msAfterMinutes } from "../shared/timestamps.js";
import type { SqliteDatabase } from "./database.js";

interface ItemRow {
  namespace: string;
  key: string;
  value: string;
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
    value: JSON.parse(row.value),
    created_at: row.created_at,
    updated_at: row.updated_at,
    expires_at: row.expires_at,
    ttl_minutes: row.ttl_minutes,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Conditions on the items aliased `i` (and the namespace column `namespace`) that a read keeps. */
function scopeSql(
  namespace: string,
  prefix: string[],
  conditions: StoreCondition[],
  now: string,
): { where: string; params: unknown[] } {
  // Live: an expired item is gone for reads before the sweeper deletes it.
  const clauses = ["(i.expires_at IS NULL OR i.expires_at > ?)"];
  const params: unknown[] = [now];
  const range = prefixRange(prefix);
  if (range) {
    clauses.push(`${namespace} >= ? AND ${namespace} < ? AND (${namespace} = ? OR ${namespace} >= ?)`);
    params.push(range.exact, range.end, range.exact, range.descendants);
  }
  if (conditions.length > 0) {
    clauses.push("store_value_matches(i.value, ?)");
    params.push(JSON.stringify(conditions));
  }
  return { where: clauses.join(" AND "), params };
}

export class SqliteStoreRepository implements StoreRepository {
  constructor(private readonly db: SqliteDatabase) {}

  async get(namespace: string[], key: string, refreshTtl: boolean): Promise<StoreItemRecord | undefined> {
    const row = this.db
      .prepare(
        `SELECT ${STORE_ITEM_COLUMNS} FROM store_items WHERE namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)`,
      )
      .get(joinNamespace(namespace), key, iso(Date.now())) as ItemRow | undefined;
    if (row && refreshTtl) this.refresh([row]);
    return row && fromRow(row);
  }

  async put(item: StorePut): Promise<void> {
    const namespace = itemNamespace(item.namespace);
    const nowMs = Date.now();
    const now = iso(nowMs);
    const expiresAt = item.ttlMinutes === null ? null : iso(msAfterMinutes(nowMs, item.ttlMinutes));
    const vectors = item.vectors.map((vector) => ({ field: vector.field, bytes: encodeVector(vector.vector) }));
    this.db
      .transaction(() => {
        // A replaced item keeps its created_at, unless it had expired: then it is a new item.
        this.db
          .prepare(
            `INSERT INTO store_items (namespace, key, value, created_at, updated_at, expires_at, ttl_minutes)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (namespace, key) DO UPDATE SET
               value = excluded.value, updated_at = excluded.updated_at,
               expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes,
               created_at = CASE WHEN store_items.expires_at <= excluded.updated_at THEN excluded.created_at
                                 ELSE store_items.created_at END`,
          )
          .run(namespace, item.key, JSON.stringify(item.value), now, now, expiresAt, item.ttlMinutes);
        this.db.prepare("DELETE FROM store_vectors WHERE namespace = ? AND key = ?").run(namespace, item.key);
        const insert = this.db.prepare("INSERT INTO store_vectors (namespace, key, idx, field, vector) VALUES (?, ?, ?, ?, ?)");
        for (const [idx, vector] of vectors.entries()) insert.run(namespace, item.key, idx, vector.field, vector.bytes);
      })
      .immediate();
  }

  async delete(namespace: string[], key: string): Promise<void> {
    // Its vectors go with it (ON DELETE CASCADE).
    this.db.prepare("DELETE FROM store_items WHERE namespace = ? AND key = ?").run(joinNamespace(namespace), key);
  }

  async search(query: StoreSearchQuery): Promise<StoreSearchHit[]> {
    const conditions = storeConditions(query.filter);
    // A read transaction, so that its statements read one state of the database without holding up writers.
    const hits = this.db.transaction(() => {
      const nowMs = Date.now();
      return query.vector ? this.nearest(query, query.vector, conditions, nowMs) : this.newest(query, conditions, nowMs);
    })();
    if (query.refreshTtl) this.refresh(hits.map((hit) => hit.row));
    return hits.map(({ row, score }) => ({ ...fromRow(row), score }));
  }

  async listNamespaces(query: NamespaceQuery): Promise<string[][]> {
    const { where, params } = scopeSql("i.namespace", literalPrefix(query.prefix), [], iso(Date.now()));
    const rows = this.db.prepare(`SELECT DISTINCT i.namespace FROM store_items i WHERE ${where}`).all(...params);
    return pageNamespaces(
      rows.map((row) => (row as { namespace: string }).namespace),
      query,
    );
  }

  async sweepExpired(limit: number): Promise<number> {
    return this.db
      .prepare(
        `DELETE FROM store_items WHERE rowid IN (
           SELECT rowid FROM store_items WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
      )
      .run(iso(Date.now()), limit).changes;
  }

  async size(): Promise<StoreSize> {
    return this.db.transaction(() => {
      const { where, params } = scopeSql("i.namespace", [], [], iso(Date.now()));
      const items = this.db
        .prepare(
          `SELECT count(*) AS n, coalesce(sum(length(CAST(i.value AS BLOB))), 0) AS bytes FROM store_items i WHERE ${where}`,
        )
        .get(...params) as { n: number; bytes: number };
      const vectors = this.db
        .prepare(
          `SELECT coalesce(sum(length(v.vector)), 0) AS bytes
           FROM store_vectors v JOIN store_items i ON i.namespace = v.namespace AND i.key = v.key WHERE ${where}`,
        )
        .get(...params) as { bytes: number };
      return { items: items.n, bytes: items.bytes + vectors.bytes };
    })();
  }

  private newest(query: StoreSearchQuery, conditions: StoreCondition[], nowMs: number): Hit[] {
    const { where, params } = scopeSql("i.namespace", query.namespacePrefix, conditions, iso(nowMs));
    const rows = this.db
      .prepare(
        `SELECT ${STORE_ITEM_COLUMNS} FROM store_items i WHERE ${where}
         ORDER BY updated_at DESC, namespace, key LIMIT ? OFFSET ?`,
      )
      .all(...params, query.limit, query.offset) as ItemRow[];
    return rows.map((row) => ({ row, score: null }));
  }

  private nearest(query: StoreSearchQuery, vector: number[], conditions: StoreCondition[], nowMs: number): Hit[] {
    const ranking = new VectorRanking(vector);
    const { where, params } = scopeSql("v.namespace", query.namespacePrefix, conditions, iso(nowMs));
    const candidates = this.db
      .prepare(
        `SELECT v.namespace, v.key, v.vector FROM store_vectors v
         JOIN store_items i ON i.namespace = v.namespace AND i.key = v.key
         WHERE length(v.vector) = ? AND ${where}`,
      )
      .iterate(ranking.byteLength, ...params) as IterableIterator<{ namespace: string; key: string; vector: Buffer }>;
    for (const candidate of candidates) ranking.offer(candidate.namespace, candidate.key, candidate.vector);
    const item = this.db.prepare(`SELECT ${STORE_ITEM_COLUMNS} FROM store_items i WHERE namespace = ? AND key = ?`);
    // In the transaction of the ranking: every ranked item is still there.
    return ranking
      .page(query.limit, query.offset)
      .map((hit) => ({ row: item.get(hit.namespace, hit.key) as ItemRow, score: hit.score }));
  }

  /**
   * Pushes the expiry of the rows read that have a ttl to now + their ttl as it
   * stands once the write lock is held (a put may have come in between), unless
   * they expired meanwhile; the rows given show the new expiry. Rows without a
   * ttl need no write, so reading them takes no lock.
   */
  private refresh(rows: ItemRow[]): void {
    const expiring = rows.filter((row) => row.ttl_minutes !== null);
    if (expiring.length === 0) return;
    this.db
      .transaction(() => {
        const nowMs = Date.now();
        const current = this.db.prepare(
          "SELECT ttl_minutes FROM store_items WHERE namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)",
        );
        const update = this.db.prepare("UPDATE store_items SET expires_at = ? WHERE namespace = ? AND key = ?");
        for (const row of expiring) {
          const found = current.get(row.namespace, row.key, iso(nowMs)) as { ttl_minutes: number | null } | undefined;
          if (found?.ttl_minutes == null) continue;
          row.expires_at = iso(msAfterMinutes(nowMs, found.ttl_minutes));
          update.run(row.expires_at, row.namespace, row.key);
        }
      })
      .immediate();
  }
}
