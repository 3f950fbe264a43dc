import type { Cron, CronFilter, CronQuery, CronTick, CronUpdate, NewCron } from "../cron-types.js";
import { CRON_COLUMNS } from "../shared/columns.js";
import { sqliteScope } from "../shared/scope.js";
import { nowIso } from "../shared/timestamps.js";
import type { CronFireResult, CronRepository, MetadataScope, NewRun } from "../types.js";
import type { SqliteDatabase } from "./database.js";
import { parseJsonColumn } from "./json-columns.js";
import { insertRun } from "./run-insert.js";

/** A crons row as SQLite returns it: JSON as text, enabled as 0/1. */
interface CronRow extends Omit<Cron, "payload" | "metadata" | "enabled"> {
  payload: string;
  metadata: string;
  enabled: number;
}

function fromRow(row: CronRow): Cron {
  return {
    ...row,
    payload: parseJsonColumn(row.payload) ?? {},
    metadata: parseJsonColumn(row.metadata) ?? {},
    enabled: row.enabled === 1,
  };
}

/** Sortable columns, whitelisted because they are interpolated. */
const SORT_COLUMNS: Record<CronQuery["sort_by"], string> = {
  cron_id: "cron_id",
  assistant_id: "assistant_id",
  thread_id: "thread_id",
  created_at: "created_at",
  updated_at: "updated_at",
  next_run_date: "next_run_date",
};

function filterSql(filter: CronFilter): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const inScope = sqliteScope(filter.scope);
  if (inScope.sql) {
    clauses.push(inScope.sql.slice(" AND ".length));
    params.push(...inScope.params);
  }
  if (filter.assistant_id !== undefined) {
    clauses.push("assistant_id = ?");
    params.push(filter.assistant_id);
  }
  if (filter.thread_id !== undefined) {
    clauses.push("thread_id = ?");
    params.push(filter.thread_id);
  }
  if (filter.enabled !== undefined) {
    clauses.push("enabled = ?");
    params.push(filter.enabled ? 1 : 0);
  }
  if (filter.metadata !== undefined && Object.keys(filter.metadata).length > 0) {
    clauses.push("json_contains(metadata, ?)");
    params.push(JSON.stringify(filter.metadata));
  }
  return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

/** Crons over SQLite: writes are IMMEDIATE transactions, so processes sharing the file take turns. */
export class SqliteCronRepository implements CronRepository {
  constructor(private readonly db: SqliteDatabase) {}

  async create(cron: NewCron): Promise<Cron | undefined> {
    return this.db
      .transaction((): Cron | undefined => {
        // Checked here, in the transaction, rather than left to the foreign keys: a missing row is a 404, not an error.
        if (!this.db.prepare("SELECT 1 FROM assistants WHERE assistant_id = ?").get(cron.assistant_id)) return undefined;
        if (cron.thread_id !== null && !this.db.prepare("SELECT 1 FROM threads WHERE thread_id = ?").get(cron.thread_id)) {
          return undefined;
        }
        const now = nowIso();
        this.db
          .prepare(`INSERT INTO crons (${CRON_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
          .run(
            cron.cron_id,
            cron.assistant_id,
            cron.thread_id,
            cron.on_run_completed,
            cron.end_time,
            cron.schedule,
            cron.timezone,
            now,
            now,
            JSON.stringify(cron.payload),
            cron.user_id,
            cron.next_run_date,
            JSON.stringify(cron.metadata),
            cron.enabled ? 1 : 0,
          );
        return this.getSync(cron.cron_id);
      })
      .immediate();
  }

  async get(cronId: string, scope?: MetadataScope): Promise<Cron | undefined> {
    return this.getSync(cronId, scope);
  }

  async update(cronId: string, update: CronUpdate, scope?: MetadataScope): Promise<Cron | undefined> {
    // The scope applies to the cron as it is, before the update replaces its metadata.
    const inScope = sqliteScope(scope);
    const changed = this.db
      .prepare(
        `UPDATE crons SET on_run_completed = ?, end_time = ?, schedule = ?, timezone = ?, payload = ?,
           next_run_date = CASE WHEN ? THEN ? ELSE next_run_date END, metadata = ?, enabled = ?, updated_at = ?
         WHERE cron_id = ?${inScope.sql}`,
      )
      .run(
        update.on_run_completed,
        update.end_time,
        update.schedule,
        update.timezone,
        JSON.stringify(update.payload),
        update.next_run_date === undefined ? 0 : 1,
        update.next_run_date ?? null,
        JSON.stringify(update.metadata),
        update.enabled ? 1 : 0,
        nowIso(),
        cronId,
        ...inScope.params,
      ).changes;
    return changed > 0 ? this.getSync(cronId) : undefined;
  }

  async delete(cronId: string, scope?: MetadataScope): Promise<boolean> {
    const inScope = sqliteScope(scope);
    return this.db.prepare(`DELETE FROM crons WHERE cron_id = ?${inScope.sql}`).run(cronId, ...inScope.params).changes > 0;
  }

  async search(query: CronQuery): Promise<{ items: Cron[]; total: number }> {
    const { where, params } = filterSql(query);
    const order = query.sort_order === "asc" ? "ASC" : "DESC";
    const rows = this.db
      .prepare(
        `SELECT ${CRON_COLUMNS}, count(*) OVER () AS total FROM crons ${where}
         ORDER BY ${SORT_COLUMNS[query.sort_by]} ${order}, rowid ${order} LIMIT ? OFFSET ?`,
      )
      .all(...params, query.limit, query.offset) as (CronRow & { total: number })[];
    const total = rows.length > 0 ? rows[0].total : await this.count(query);
    return { items: rows.map(({ total: _total, ...row }) => fromRow(row)), total };
  }

  async count(filter: CronFilter): Promise<number> {
    const { where, params } = filterSql(filter);
    return (this.db.prepare(`SELECT count(*) AS n FROM crons ${where}`).get(...params) as { n: number }).n;
  }

  async due(now: string, limit: number): Promise<Cron[]> {
    const rows = this.db
      .prepare(
        `SELECT ${CRON_COLUMNS} FROM crons WHERE enabled = 1 AND next_run_date IS NOT NULL AND next_run_date <= ?
         ORDER BY next_run_date LIMIT ?`,
      )
      .all(now, limit) as CronRow[];
    return rows.map(fromRow);
  }

  async nextDueAt(): Promise<number | null> {
    const row = this.db
      .prepare("SELECT min(next_run_date) AS next FROM crons WHERE enabled = 1 AND next_run_date IS NOT NULL")
      .get() as { next: string | null };
    return row.next === null ? null : Date.parse(row.next);
  }

  async fire(tick: CronTick, run: NewRun | undefined): Promise<CronFireResult> {
    return this.db
      .transaction((): CronFireResult => {
        const claimed = this.db
          .prepare("UPDATE crons SET next_run_date = ? WHERE cron_id = ? AND next_run_date = ? AND enabled = 1")
          .run(tick.next, tick.cron_id, tick.due).changes;
        if (claimed === 0) return { kind: "taken" };
        return run ? { kind: "claimed", run: insertRun(this.db, run).result } : { kind: "claimed" };
      })
      .immediate();
  }

  private getSync(cronId: string, scope?: MetadataScope): Cron | undefined {
    const inScope = sqliteScope(scope);
    const row = this.db
      .prepare(`SELECT ${CRON_COLUMNS} FROM crons WHERE cron_id = ?${inScope.sql}`)
      .get(cronId, ...inScope.params) as CronRow | undefined;
    return row && fromRow(row);
  }
}
