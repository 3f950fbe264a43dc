import { jsonb } from "@berth/service-kit";
import type pg from "pg";
import type { Cron, CronFilter, CronQuery, CronTick, CronUpdate, NewCron } from "../cron-types.js";
import { CRON_COLUMNS } from "../shared/columns.js";
import { postgresScope, restricts } from "../shared/scope.js";
import { nowIso } from "../shared/timestamps.js";
import type { CronFireResult, CronRepository, MetadataScope, NewRun } from "../types.js";
import { sqlState, withTransaction } from "./database.js";
import { insertRun } from "./run-insert.js";

/** Sortable columns, whitelisted because they are interpolated. */
const SORT_COLUMNS: Record<CronQuery["sort_by"], string> = {
  cron_id: "cron_id",
  assistant_id: "assistant_id",
  thread_id: "thread_id",
  created_at: "created_at",
  updated_at: "updated_at",
  next_run_date: "next_run_date",
};

/** WHERE clause of a cron filter; its parameters are appended to `params`. */
function filterSql(filter: CronFilter, params: unknown[]): string {
  const clauses: string[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  if (restricts(filter.scope)) clauses.push(`metadata @> ${param(jsonb(filter.scope))}::jsonb`);
  if (filter.assistant_id !== undefined) clauses.push(`assistant_id = ${param(filter.assistant_id)}`);
  if (filter.thread_id !== undefined) clauses.push(`thread_id = ${param(filter.thread_id)}`);
  if (filter.enabled !== undefined) clauses.push(`enabled = ${param(filter.enabled)}`);
  if (filter.metadata !== undefined && Object.keys(filter.metadata).length > 0) {
    clauses.push(`metadata @> ${param(jsonb(filter.metadata))}::jsonb`);
  }
  return clauses.length ? `WHERE ${clauses.join(" AND ")}` : "";
}

/**
 * Crons over PostgreSQL, shared by every process. `fire` claims a tick with a
 * conditional UPDATE: a second process claiming the same tick waits for the
 * first one's row lock, then finds next_run_date moved and updates nothing.
 */
export class PostgresCronRepository implements CronRepository {
  constructor(private readonly pool: pg.Pool) {}

  async create(cron: NewCron): Promise<Cron | undefined> {
    try {
      const { rows } = await this.pool.query<Cron>(
        `INSERT INTO crons (${CRON_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9::jsonb, $10, $11, $12::jsonb, $13) RETURNING ${CRON_COLUMNS}`,
        [
          cron.cron_id,
          cron.assistant_id,
          cron.thread_id,
          cron.on_run_completed,
          cron.end_time,
          cron.schedule,
          cron.timezone,
          nowIso(),
          jsonb(cron.payload),
          cron.user_id,
          cron.next_run_date,
          jsonb(cron.metadata),
          cron.enabled,
        ],
      );
      return rows[0];
    } catch (err) {
      // The assistant or thread is gone (deleted, maybe just now): a 404 for the caller.
      if (sqlState(err) === "23503") return undefined;
      throw err;
    }
  }

  async get(cronId: string, scope?: MetadataScope): Promise<Cron | undefined> {
    const params: unknown[] = [cronId];
    const inScope = postgresScope(scope, params);
    const { rows } = await this.pool.query<Cron>(`SELECT ${CRON_COLUMNS} FROM crons WHERE cron_id = $1${inScope}`, params);
    return rows[0];
  }

  async update(cronId: string, update: CronUpdate, scope?: MetadataScope): Promise<Cron | undefined> {
    const params: unknown[] = [
      cronId,
      update.on_run_completed,
      update.end_time,
      update.schedule,
      update.timezone,
      jsonb(update.payload),
      update.next_run_date ?? null,
      jsonb(update.metadata),
      update.enabled,
      nowIso(),
      update.next_run_date !== undefined,
    ];
    // The scope applies to the cron as it is, before the update replaces its metadata.
    const inScope = postgresScope(scope, params);
    const { rows } = await this.pool.query<Cron>(
      `UPDATE crons SET on_run_completed = $2, end_time = $3, schedule = $4, timezone = $5, payload = $6::jsonb,
         next_run_date = CASE WHEN $11 THEN $7::timestamptz ELSE next_run_date END, metadata = $8::jsonb, enabled = $9,
         updated_at = $10
       WHERE cron_id = $1${inScope} RETURNING ${CRON_COLUMNS}`,
      params,
    );
    return rows[0];
  }

  async delete(cronId: string, scope?: MetadataScope): Promise<boolean> {
    const params: unknown[] = [cronId];
    const inScope = postgresScope(scope, params);
    return ((await this.pool.query(`DELETE FROM crons WHERE cron_id = $1${inScope}`, params)).rowCount ?? 0) > 0;
  }

  async search(query: CronQuery): Promise<{ items: Cron[]; total: number }> {
    const params: unknown[] = [];
    const where = filterSql(query, params);
    const order = query.sort_order === "asc" ? "ASC" : "DESC";
    const { rows } = await this.pool.query<Cron & { total: number }>(
      `SELECT ${CRON_COLUMNS}, count(*) OVER () AS total FROM crons ${where}
       ORDER BY ${SORT_COLUMNS[query.sort_by]} ${order}, seq ${order}
       LIMIT $${params.push(query.limit)} OFFSET $${params.push(query.offset)}`,
      params,
    );
    const total = rows.length > 0 ? rows[0].total : await this.count(query);
    return { items: rows.map(({ total: _total, ...cron }) => cron), total };
  }

  async count(filter: CronFilter): Promise<number> {
    const params: unknown[] = [];
    const where = filterSql(filter, params);
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM crons ${where}`, params);
    return rows[0].n;
  }

  async due(now: string, limit: number): Promise<Cron[]> {
    const { rows } = await this.pool.query<Cron>(
      `SELECT ${CRON_COLUMNS} FROM crons WHERE enabled AND next_run_date IS NOT NULL AND next_run_date <= $1
       ORDER BY next_run_date LIMIT $2`,
      [now, limit],
    );
    return rows;
  }

  async nextDueAt(): Promise<number | null> {
    const { rows } = await this.pool.query<{ next: string | null }>(
      "SELECT (extract(epoch FROM min(next_run_date)) * 1000)::text AS next FROM crons WHERE enabled AND next_run_date IS NOT NULL",
    );
    return rows[0]?.next == null ? null : Math.round(Number(rows[0].next));
  }

  fire(tick: CronTick, run: NewRun | undefined): Promise<CronFireResult> {
    // The cron row is locked before the thread's (insertRun); a thread deletion cascading to its crons locks them the
    // other way round: a deadlock between the two is retried by withTransaction.
    return withTransaction(this.pool, async (client): Promise<CronFireResult> => {
      const claimed = await client.query(
        "UPDATE crons SET next_run_date = $2 WHERE cron_id = $1 AND next_run_date = $3 AND enabled",
        [tick.cron_id, tick.next, tick.due],
      );
      if (claimed.rowCount === 0) return { kind: "taken" };
      return run ? { kind: "claimed", run: await insertRun(client, run) } : { kind: "claimed" };
    });
  }
}
