import type { SqliteDatabase } from "@berth/service-kit";
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
import {
  FEEDBACK,
  FEEDBACK_COLUMNS,
  RUN,
  RUN_COLUMNS,
  SPAN,
  STATUS_SQL,
  TOKEN,
  TOKEN_COLUMNS,
  USAGE_SELECT,
} from "../tracing-columns.js";

type Row = Record<string, unknown>;

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const parsed = (value: unknown) => (value === null || value === undefined ? null : JSON.parse(value as string));

/** Rows back into records: JSON columns are text in SQLite. */
function fromRow<T>(row: Row, jsonColumns: ReadonlySet<string>): T {
  const record: Row = { ...row };
  for (const column of jsonColumns) record[column] = parsed(row[column]);
  return record as T;
}

const RUN_JSON: ReadonlySet<string> = new Set(["inputs", "outputs", "extra", "tags", "events"]);
const FEEDBACK_JSON: ReadonlySet<string> = new Set(["value", "correction", "metadata"]);
const TOKEN_JSON: ReadonlySet<string> = new Set(["feedback_config"]);
const SPAN_JSON: ReadonlySet<string> = new Set(["extra"]);
const runFromRow = (row: Row) => fromRow<TracedRunRecord>(row, RUN_JSON);
const feedbackFromRow = (row: Row) => fromRow<FeedbackRecord>(row, FEEDBACK_JSON);
const tokenFromRow = (row: Row) => fromRow<FeedbackTokenRecord>(row, TOKEN_JSON);

/** The values of `record` for `columns`, JSON columns as text. */
function values(record: object, columns: readonly string[], jsonColumns: ReadonlySet<string>): unknown[] {
  const row = record as Row;
  return columns.map((column) => (jsonColumns.has(column) ? json(row[column]) : row[column]));
}
const UPSERT_RUN = `INSERT INTO traced_runs (${RUN}) VALUES (${RUN_COLUMNS.map(() => "?").join(", ")})
  ON CONFLICT (tenant_id, id) DO UPDATE SET ${RUN_COLUMNS.filter((column) => column !== "tenant_id" && column !== "id")
    .map((column) => `${column} = excluded.${column}`)
    .join(", ")}`;

export class SqliteTracingStore implements TracingStore {
  constructor(private readonly db: SqliteDatabase) {}

  async projectById(tenantId: string, id: string): Promise<TracingProjectRecord | undefined> {
    return this.db.prepare(`SELECT ${TRACING_PROJECT} FROM tracing_projects WHERE tenant_id = ? AND id = ?`).get(tenantId, id) as
      | TracingProjectRecord
      | undefined;
  }

  async projectByName(tenantId: string, name: string): Promise<TracingProjectRecord | undefined> {
    return this.db
      .prepare(`SELECT ${TRACING_PROJECT} FROM tracing_projects WHERE tenant_id = ? AND name = ?`)
      .get(tenantId, name) as TracingProjectRecord | undefined;
  }

  async ensureProject(project: TracingProjectRecord): Promise<TracingProjectRecord> {
    this.db
      .prepare(
        "INSERT INTO tracing_projects (id, tenant_id, name, deployment_id, created_at) VALUES (?, ?, ?, NULL, ?) ON CONFLICT (tenant_id, name) DO NOTHING",
      )
      .run(project.id, project.tenant_id, project.name, project.created_at);
    return (await this.projectByName(project.tenant_id, project.name))!;
  }

  async upsertRuns(
    tenantId: string,
    ids: string[],
    merge: (current: Map<string, TracedRunRecord>) => TracedRunRecord[],
  ): Promise<void> {
    const select = this.db.prepare(
      `SELECT ${RUN} FROM traced_runs WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
    );
    const upsert = this.db.prepare(UPSERT_RUN);
    // IMMEDIATE: the write lock first, so another process's merge of the same run waits for this one.
    this.db
      .transaction(() => {
        const rows = select.all(tenantId, JSON.stringify(ids)) as Row[];
        const current = new Map(rows.map((row) => [row.id as string, runFromRow(row)]));
        for (const run of merge(current)) upsert.run(...values(run, RUN_COLUMNS, RUN_JSON));
      })
      .immediate();
  }

  async getRun(tenantId: string, id: string): Promise<TracedRunRecord | undefined> {
    const row = this.db.prepare(`SELECT ${RUN} FROM traced_runs WHERE tenant_id = ? AND id = ?`).get(tenantId, id) as
      | Row
      | undefined;
    return row && runFromRow(row);
  }

  async traceRuns(tenantId: string, traceId: string): Promise<TracedRunRecord[]> {
    const rows = this.db
      .prepare(`SELECT ${RUN} FROM traced_runs WHERE tenant_id = ? AND trace_id = ? ORDER BY dotted_order, start_time, id`)
      .all(tenantId, traceId) as Row[];
    return rows.map(runFromRow);
  }

  async listRuns(tenantId: string, filter: RunFilter): Promise<TracedRunRecord[]> {
    const where = ["tenant_id = ?", "project_id = ?"];
    const params: unknown[] = [tenantId, filter.project_id];
    const add = (clause: string, value: unknown) => {
      where.push(clause);
      params.push(value);
    };
    if (filter.thread_id !== undefined) add("thread_id = ?", filter.thread_id);
    if (filter.trace_id !== undefined) add("trace_id = ?", filter.trace_id);
    if (filter.root_only) where.push("parent_run_id IS NULL");
    if (filter.statuses) where.push(`(${filter.statuses.map((status) => STATUS_SQL[status]).join(" OR ")})`);
    if (filter.name !== undefined) add("name = ?", filter.name);
    // Times are ISO text here: julianday reads them (Z included); milliseconds rounded away from float noise.
    const latency = "ROUND((julianday(end_time) - julianday(start_time)) * 86400000.0)";
    if (filter.min_latency_ms !== undefined) add(`${latency} >= ?`, filter.min_latency_ms);
    if (filter.max_latency_ms !== undefined) add(`${latency} <= ?`, filter.max_latency_ms);
    const order = filter.order === "asc" ? "ASC" : "DESC";
    const rows = this.db
      .prepare(
        `SELECT ${RUN} FROM traced_runs WHERE ${where.join(" AND ")} ORDER BY start_time ${order}, id ${order} LIMIT ? OFFSET ?`,
      )
      .all(...params, filter.limit, filter.offset) as Row[];
    return rows.map(runFromRow);
  }

  async traceSpans(tenantId: string, filter: SpanFilter): Promise<{ spans: TraceSpanRecord[]; total: number }> {
    const where = ["tenant_id = ?", "trace_id = ?", "project_id = ?"];
    const params: unknown[] = [tenantId, filter.trace_id, filter.project_id];
    if (filter.root_dotted_order !== null) {
      const prefix = `${filter.root_dotted_order}.`;
      where.push("(dotted_order = ? OR substr(dotted_order, 1, ?) = ?)");
      params.push(filter.root_dotted_order, prefix.length, prefix);
    }
    const rows = this.db
      .prepare(
        `SELECT ${SPAN} FROM traced_runs WHERE ${where.join(" AND ")} ORDER BY dotted_order, start_time, id LIMIT ? OFFSET ?`,
      )
      .all(...params, filter.limit, filter.offset) as Row[];
    const { total } = this.db
      .prepare(`SELECT COUNT(*) AS total FROM traced_runs WHERE ${where.join(" AND ")}`)
      .get(...params) as { total: number };
    return { spans: rows.map((row) => fromRow<TraceSpanRecord>(row, SPAN_JSON)), total };
  }

  async threadUsage(tenantId: string, projectId: string, threadId: string): Promise<ThreadUsage> {
    return this.db
      .prepare(`SELECT ${USAGE_SELECT} FROM traced_runs WHERE tenant_id = ? AND project_id = ? AND thread_id = ?`)
      .get(tenantId, projectId, threadId) as ThreadUsage;
  }

  async addFeedback(records: FeedbackRecord[]): Promise<void> {
    const insert = this.db.prepare(
      `INSERT INTO tracing_feedback (${FEEDBACK}) VALUES (${FEEDBACK_COLUMNS.map(() => "?").join(", ")})
       ON CONFLICT (tenant_id, id) DO NOTHING`,
    );
    this.db
      .transaction(() => {
        for (const record of records) insert.run(...values(record, FEEDBACK_COLUMNS, FEEDBACK_JSON));
      })
      .immediate();
  }

  async listFeedback(tenantId: string, runId: string, limit: number, offset: number): Promise<FeedbackRecord[]> {
    const rows = this.db
      .prepare(
        `SELECT ${FEEDBACK} FROM tracing_feedback WHERE tenant_id = ? AND run_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
      )
      .all(tenantId, runId, limit, offset) as Row[];
    return rows.map(feedbackFromRow);
  }

  async createToken(token: FeedbackTokenRecord): Promise<void> {
    this.db
      .prepare(`INSERT INTO feedback_tokens (${TOKEN}) VALUES (${TOKEN_COLUMNS.map(() => "?").join(", ")})`)
      .run(...values(token, TOKEN_COLUMNS, TOKEN_JSON));
  }

  async getToken(tokenHash: string): Promise<FeedbackTokenRecord | undefined> {
    const row = this.db.prepare(`SELECT ${TOKEN} FROM feedback_tokens WHERE token_hash = ?`).get(tokenHash) as Row | undefined;
    return row && tokenFromRow(row);
  }
}
