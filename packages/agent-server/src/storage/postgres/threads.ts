import type pg from "pg";
import type {
  BerthCheckpointer,
  JsonObject,
  MetadataScope,
  NewThread,
  PruneStrategy,
  Thread,
  ThreadFilter,
  ThreadQuery,
  ThreadRepository,
  ThreadStateSummary,
} from "../types.js";
import { THREAD_COLUMNS } from "../shared/columns.js";
import { postgresScope, restricts } from "../shared/scope.js";
import { expiresAtIso, nowIso } from "../shared/timestamps.js";
import { copyThreadCheckpoints, deleteThreadCheckpoints } from "./checkpoint-sql.js";
import { withTransaction } from "./database.js";
import { prepared } from "./prepared.js";
import { jsonb, jsonbOrNull } from "@berth/service-kit";

/** Sortable columns, whitelisted because they are interpolated. */
const SORT_COLUMNS: Record<ThreadQuery["sort_by"], string> = {
  thread_id: "thread_id",
  status: "status",
  created_at: "created_at",
  updated_at: "updated_at",
};

/** WHERE clause of a thread filter; its parameters are appended to `params`. */
function filterSql(filter: ThreadFilter, params: unknown[]): string {
  const param = (value: unknown) => `$${params.push(value)}`;
  // Expired threads are gone for search and count before the sweeper deletes them.
  const clauses: string[] = [`(expires_at IS NULL OR expires_at > ${param(nowIso())})`];
  if (restricts(filter.scope)) clauses.push(`metadata @> ${param(jsonb(filter.scope))}::jsonb`);
  if (filter.ids !== undefined) clauses.push(`thread_id = ANY(${param(filter.ids)}::text[])`);
  if (filter.status !== undefined) clauses.push(`status = ${param(filter.status)}`);
  if (filter.metadata !== undefined && Object.keys(filter.metadata).length > 0) {
    clauses.push(`metadata @> ${param(jsonb(filter.metadata))}::jsonb`);
  }
  if (filter.values !== undefined && Object.keys(filter.values).length > 0) {
    // A thread without values (SQL NULL) matches no values filter.
    clauses.push(`"values" @> ${param(jsonb(filter.values))}::jsonb`);
  }
  return `WHERE ${clauses.join(" AND ")}`;
}

export class PostgresThreadRepository implements ThreadRepository {
  constructor(
    private readonly pool: pg.Pool,
    private readonly checkpointer: () => Promise<BerthCheckpointer>,
  ) {}

  async create(thread: NewThread): Promise<Thread | undefined> {
    const now = nowIso();
    const { rows } = await this.pool.query<Thread>(
      `INSERT INTO threads (thread_id, status, metadata, config, created_at, updated_at, expires_at, ttl_minutes)
       VALUES ($1, 'idle', $2::jsonb, $3::jsonb, $4, $4, $5, $6) ON CONFLICT (thread_id) DO NOTHING RETURNING ${THREAD_COLUMNS}`,
      [
        thread.thread_id,
        jsonb(thread.metadata),
        jsonb(thread.config ?? {}),
        now,
        expiresAtIso(thread.ttl_minutes),
        thread.ttl_minutes ?? null,
      ],
    );
    return rows[0];
  }

  async get(threadId: string, scope?: MetadataScope): Promise<Thread | undefined> {
    const params: unknown[] = [threadId];
    const inScope = postgresScope(scope, params);
    const { rows } = await prepared<Thread>(
      this.pool,
      inScope ? "berth_get_thread_scoped" : "berth_get_thread",
      `SELECT ${THREAD_COLUMNS} FROM threads WHERE thread_id = $1${inScope}`,
      params,
    );
    return rows[0];
  }

  async patch(
    threadId: string,
    metadata: JsonObject,
    ttlMinutes?: number | null,
    scope?: MetadataScope,
  ): Promise<Thread | undefined> {
    // `||` is the shallow merge SQLite does in JS, here under the row lock of the update;
    // the scope is checked against the metadata before the merge.
    const keepTtl = ttlMinutes === undefined;
    const params: unknown[] = [threadId, jsonb(metadata), nowIso(), keepTtl, expiresAtIso(ttlMinutes), ttlMinutes ?? null];
    const inScope = postgresScope(scope, params);
    const { rows } = await this.pool.query<Thread>(
      `UPDATE threads SET metadata = metadata || $2::jsonb, updated_at = $3,
         expires_at = CASE WHEN $4 THEN expires_at ELSE $5::timestamptz END,
         ttl_minutes = CASE WHEN $4 THEN ttl_minutes ELSE $6::double precision END
       WHERE thread_id = $1${inScope} RETURNING ${THREAD_COLUMNS}`,
      params,
    );
    return rows[0];
  }

  async delete(threadId: string, scope?: MetadataScope): Promise<boolean> {
    const params: unknown[] = [threadId];
    const inScope = postgresScope(scope, params);
    return withTransaction(this.pool, async (client) => {
      const deleted = ((await client.query(`DELETE FROM threads WHERE thread_id = $1${inScope}`, params)).rowCount ?? 0) > 0;
      if (deleted) await deleteThreadCheckpoints(client, threadId);
      return deleted;
    });
  }

  async search(query: ThreadQuery): Promise<{ items: Thread[]; total: number }> {
    const params: unknown[] = [];
    const where = filterSql(query, params);
    const order = query.sort_order === "desc" ? "DESC" : "ASC";
    const { rows } = await this.pool.query<Thread & { total: number }>(
      `SELECT ${THREAD_COLUMNS}, count(*) OVER () AS total FROM threads ${where}
       ORDER BY ${SORT_COLUMNS[query.sort_by]} ${order}, seq ${order}
       LIMIT $${params.push(query.limit)} OFFSET $${params.push(query.offset)}`,
      params,
    );
    const total = rows.length > 0 ? rows[0].total : await this.count(query);
    return { items: rows.map(({ total: _total, ...thread }) => thread), total };
  }

  async count(filter: ThreadFilter): Promise<number> {
    const params: unknown[] = [];
    const where = filterSql(filter, params);
    return (await this.pool.query<{ n: number }>(`SELECT count(*) AS n FROM threads ${where}`, params)).rows[0].n;
  }

  async sweepExpired(limit: number): Promise<number> {
    // One process sweeps at a time (a transaction lock the others fail to take: they sweep nothing this time);
    // SKIP LOCKED: the sweep never waits behind a thread being written; busy threads wait for their run to end.
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM threads WHERE thread_id IN (
           SELECT thread_id FROM threads WHERE pg_try_advisory_xact_lock(hashtext('berth:sweep:threads'))
            AND expires_at <= $1 AND status <> 'busy'
            ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING thread_id
       ), writes AS (DELETE FROM checkpoint_writes WHERE thread_id IN (SELECT thread_id FROM gone)),
          blobs AS (DELETE FROM checkpoint_blobs WHERE thread_id IN (SELECT thread_id FROM gone)),
          checkpoints AS (DELETE FROM checkpoints WHERE thread_id IN (SELECT thread_id FROM gone))
       SELECT count(*)::int AS n FROM gone`,
      [nowIso(), limit],
    );
    return rows[0].n;
  }

  async copy(sourceId: string, targetId: string, scope?: MetadataScope, metadata?: JsonObject): Promise<Thread | undefined> {
    const params: unknown[] = [targetId, nowIso(), sourceId, metadata === undefined ? null : jsonb(metadata)];
    const inScope = postgresScope(scope, params);
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<Thread>(
        `INSERT INTO threads (thread_id, status, metadata, config, "values", interrupts, created_at, updated_at)
         SELECT $1, status, coalesce($4::jsonb, metadata), config, "values", interrupts, $2, $2 FROM threads WHERE thread_id = $3${inScope}
         RETURNING ${THREAD_COLUMNS}`,
        params,
      );
      if (rows.length === 0) return undefined;
      await copyThreadCheckpoints(client, sourceId, targetId);
      return rows[0];
    });
  }

  async setState(threadId: string, state: ThreadStateSummary): Promise<void> {
    await this.pool.query(
      `UPDATE threads SET "values" = $2::jsonb, interrupts = $3::jsonb, status = coalesce($4, status), updated_at = $5
       WHERE thread_id = $1`,
      [threadId, jsonbOrNull(state.values), jsonb(state.interrupts), state.status ?? null, nowIso()],
    );
  }

  async idsByMetadata(filter: JsonObject): Promise<string[]> {
    const { rows } = await this.pool.query<{ thread_id: string }>(
      "SELECT thread_id FROM threads WHERE metadata @> $1::jsonb ORDER BY seq",
      [jsonb(filter)],
    );
    return rows.map((row) => row.thread_id);
  }

  async prune(threadIds: string[], strategy: PruneStrategy, scope?: MetadataScope): Promise<number> {
    let pruned = 0;
    // One thread per transaction, so a long list never holds many locks for long.
    for (const threadId of new Set(threadIds)) {
      if (strategy === "delete") {
        if (await this.delete(threadId, scope)) pruned++;
      } else if (await this.exists(threadId, scope)) {
        await (await this.checkpointer()).keepLatest(threadId);
        pruned++;
      }
    }
    return pruned;
  }

  private async exists(threadId: string, scope: MetadataScope | undefined): Promise<boolean> {
    const params: unknown[] = [threadId];
    const inScope = postgresScope(scope, params);
    return ((await this.pool.query(`SELECT 1 FROM threads WHERE thread_id = $1${inScope}`, params)).rowCount ?? 0) > 0;
  }
}
