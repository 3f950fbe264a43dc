import { jsonb, jsonbOrNull, withTransaction } from "@berth/service-kit";
import type pg from "pg";
import type {
  FeedbackRecord,
  FeedbackTokenRecord,
  RunFilter,
  SpanFilter,
  ThreadUsage,
  TraceSpanRecord,
  TracedRunRecord,
  TracingProjectRecord,
  TracingStore,
} from "../tracing-types.js";
import { TRACING_PROJECT } from "../columns.js";
import { FEEDBACK, RUN, RUN_COLUMNS, SPAN, STATUS_SQL, TOKEN, USAGE_SELECT } from "../tracing-columns.js";

/** The column types of traced_runs, to read a batch of runs sent as one JSON array (jsonb_to_recordset). */
const RUN_RECORD_TYPE = RUN_COLUMNS.map((column) => {
  if (["inputs", "outputs", "extra", "tags", "events"].includes(column)) return `${column} jsonb`;
  if (["start_time", "end_time", "created_at", "updated_at"].includes(column)) return `${column} timestamptz`;
  if (column.endsWith("_tokens")) return `${column} bigint`;
  return `${column} text`;
}).join(", ");
const UPDATED = RUN_COLUMNS.filter((column) => column !== "tenant_id" && column !== "id");

/** A concurrent batch inserted one of our runs first: merge again, over its row. */
class InsertRaced extends Error {}
const MAX_MERGE_ATTEMPTS = 10;

export class PostgresTracingStore implements TracingStore {
  constructor(private readonly pool: pg.Pool) {}

  async projectById(tenantId: string, id: string): Promise<TracingProjectRecord | undefined> {
    const { rows } = await this.pool.query<TracingProjectRecord>(
      `SELECT ${TRACING_PROJECT} FROM tracing_projects WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return rows[0];
  }

  async projectByName(tenantId: string, name: string): Promise<TracingProjectRecord | undefined> {
    const { rows } = await this.pool.query<TracingProjectRecord>(
      `SELECT ${TRACING_PROJECT} FROM tracing_projects WHERE tenant_id = $1 AND name = $2`,
      [tenantId, name],
    );
    return rows[0];
  }

  async ensureProject(project: TracingProjectRecord): Promise<TracingProjectRecord> {
    await this.pool.query(
      `INSERT INTO tracing_projects (id, tenant_id, name, deployment_id, created_at) VALUES ($1, $2, $3, NULL, $4)
       ON CONFLICT (tenant_id, name) DO NOTHING`,
      [project.id, project.tenant_id, project.name, project.created_at],
    );
    return (await this.projectByName(project.tenant_id, project.name))!;
  }

  /**
   * Stored runs are locked (FOR UPDATE) while they are merged. A run not
   * stored yet cannot be locked: it is inserted with ON CONFLICT DO NOTHING,
   * and when a concurrent batch inserted it meanwhile (its commit is awaited
   * by the insert) the whole merge runs again, now over that run.
   */
  async upsertRuns(
    tenantId: string,
    ids: string[],
    merge: (current: Map<string, TracedRunRecord>) => TracedRunRecord[],
  ): Promise<void> {
    const sorted = [...ids].sort(); // one lock order for every batch
    for (let attempt = 1; ; attempt++) {
      try {
        await withTransaction(this.pool, async (client) => {
          const { rows } = await client.query<TracedRunRecord>(
            `SELECT ${RUN} FROM traced_runs WHERE tenant_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
            [tenantId, sorted],
          );
          const current = new Map(rows.map((row) => [row.id, row]));
          const merged = merge(current);
          const fresh = merged.filter((run) => !current.has(run.id)).sort((a, b) => (a.id < b.id ? -1 : 1));
          const stored = merged.filter((run) => current.has(run.id));
          if (fresh.length > 0) {
            const inserted = await client.query(
              `INSERT INTO traced_runs (${RUN}) SELECT ${RUN} FROM jsonb_to_recordset($1::jsonb) AS v(${RUN_RECORD_TYPE})
               ON CONFLICT (tenant_id, id) DO NOTHING`,
              [jsonb(fresh)],
            );
            if (inserted.rowCount !== fresh.length) throw new InsertRaced();
          }
          if (stored.length > 0) {
            await client.query(
              `UPDATE traced_runs AS t SET ${UPDATED.map((column) => `${column} = v.${column}`).join(", ")}
               FROM jsonb_to_recordset($1::jsonb) AS v(${RUN_RECORD_TYPE})
               WHERE t.tenant_id = v.tenant_id AND t.id = v.id`,
              [jsonb(stored)],
            );
          }
        });
        return;
      } catch (error) {
        if (!(error instanceof InsertRaced) || attempt >= MAX_MERGE_ATTEMPTS) throw error;
      }
    }
  }

  async getRun(tenantId: string, id: string): Promise<TracedRunRecord | undefined> {
    const { rows } = await this.pool.query<TracedRunRecord>(`SELECT ${RUN} FROM traced_runs WHERE tenant_id = $1 AND id = $2`, [
      tenantId,
      id,
    ]);
    return rows[0];
  }

  async traceRuns(tenantId: string, traceId: string): Promise<TracedRunRecord[]> {
    const { rows } = await this.pool.query<TracedRunRecord>(
      `SELECT ${RUN} FROM traced_runs WHERE tenant_id = $1 AND trace_id = $2 ORDER BY dotted_order NULLS FIRST, start_time NULLS FIRST, id`,
      [tenantId, traceId],
    );
    return rows;
  }

  async listRuns(tenantId: string, filter: RunFilter): Promise<TracedRunRecord[]> {
    const values: unknown[] = [];
    const param = (value: unknown) => `$${values.push(value)}`;
    const where = [`tenant_id = ${param(tenantId)}`, `project_id = ${param(filter.project_id)}`];
    if (filter.thread_id !== undefined) where.push(`thread_id = ${param(filter.thread_id)}`);
    if (filter.trace_id !== undefined) where.push(`trace_id = ${param(filter.trace_id)}`);
    if (filter.root_only) where.push("parent_run_id IS NULL");
    if (filter.statuses) where.push(`(${filter.statuses.map((status) => STATUS_SQL[status]).join(" OR ")})`);
    if (filter.name !== undefined) where.push(`name = ${param(filter.name)}`);
    const latency = "ROUND(EXTRACT(EPOCH FROM (end_time - start_time)) * 1000)";
    if (filter.min_latency_ms !== undefined) where.push(`${latency} >= ${param(filter.min_latency_ms)}`);
    if (filter.max_latency_ms !== undefined) where.push(`${latency} <= ${param(filter.max_latency_ms)}`);
    // SQLite puts NULLs first in ascending order and last in descending: the same here.
    const order = filter.order === "asc" ? "ASC NULLS FIRST" : "DESC NULLS LAST";
    const { rows } = await this.pool.query<TracedRunRecord>(
      `SELECT ${RUN} FROM traced_runs WHERE ${where.join(" AND ")}
       ORDER BY start_time ${order}, id ${filter.order === "asc" ? "ASC" : "DESC"} LIMIT ${param(filter.limit)} OFFSET ${param(filter.offset)}`,
      values,
    );
    return rows;
  }

  async traceSpans(tenantId: string, filter: SpanFilter): Promise<{ spans: TraceSpanRecord[]; total: number }> {
    const values: unknown[] = [];
    const param = (value: unknown) => `$${values.push(value)}`;
    const where = [
      `tenant_id = ${param(tenantId)}`,
      `trace_id = ${param(filter.trace_id)}`,
      `project_id = ${param(filter.project_id)}`,
    ];
    if (filter.root_dotted_order !== null) {
      const root = param(filter.root_dotted_order);
      where.push(`(dotted_order = ${root} OR starts_with(dotted_order, ${param(`${filter.root_dotted_order}.`)}))`);
    }
    const count = await this.pool.query<{ total: string }>(
      `SELECT COUNT(*) AS total FROM traced_runs WHERE ${where.join(" AND ")}`,
      values,
    );
    // dotted_order sorts byte-wise on SQLite; COLLATE "C" makes it so here whatever the database's locale.
    const { rows } = await this.pool.query<TraceSpanRecord>(
      `SELECT ${SPAN} FROM traced_runs WHERE ${where.join(" AND ")}
       ORDER BY dotted_order COLLATE "C" NULLS FIRST, start_time NULLS FIRST, id LIMIT ${param(filter.limit)} OFFSET ${param(filter.offset)}`,
      values,
    );
    return { spans: rows, total: Number(count.rows[0]!.total) };
  }

  async threadUsage(tenantId: string, projectId: string, threadId: string): Promise<ThreadUsage> {
    const { rows } = await this.pool.query<ThreadUsage>(
      `SELECT ${USAGE_SELECT} FROM traced_runs WHERE tenant_id = $1 AND project_id = $2 AND thread_id = $3`,
      [tenantId, projectId, threadId],
    );
    return rows[0]!;
  }

  async addFeedback(records: FeedbackRecord[]): Promise<void> {
    await this.pool.query(
      `INSERT INTO tracing_feedback (${FEEDBACK})
       SELECT ${FEEDBACK} FROM jsonb_to_recordset($1::jsonb) AS v(tenant_id text, id text, run_id text, trace_id text,
         key text, score double precision, value jsonb, comment text, correction jsonb, metadata jsonb, source text, created_at timestamptz)
       ON CONFLICT (tenant_id, id) DO NOTHING`,
      [jsonb(records)],
    );
  }

  async listFeedback(tenantId: string, runId: string, limit: number, offset: number): Promise<FeedbackRecord[]> {
    const { rows } = await this.pool.query<FeedbackRecord>(
      `SELECT ${FEEDBACK} FROM tracing_feedback WHERE tenant_id = $1 AND run_id = $2
       ORDER BY created_at, id LIMIT $3 OFFSET $4`,
      [tenantId, runId, limit, offset],
    );
    return rows;
  }

  async createToken(token: FeedbackTokenRecord): Promise<void> {
    await this.pool.query(`INSERT INTO feedback_tokens (${TOKEN}) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`, [
      token.token_hash,
      token.tenant_id,
      token.run_id,
      token.key,
      jsonbOrNull(token.feedback_config),
      token.expires_at,
      token.created_at,
    ]);
  }

  async getToken(tokenHash: string): Promise<FeedbackTokenRecord | undefined> {
    const { rows } = await this.pool.query<FeedbackTokenRecord>(`SELECT ${TOKEN} FROM feedback_tokens WHERE token_hash = $1`, [
      tokenHash,
    ]);
    return rows[0];
  }
}
