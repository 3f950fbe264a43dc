import type {
  Assistant,
  AssistantFilter,
  AssistantPatch,
  AssistantQuery,
  AssistantRepository,
  AssistantVersion,
  JsonObject,
  MetadataScope,
  NewAssistant,
} from "../types.js";
import { ASSISTANT_COLUMNS, ASSISTANT_VERSION_COLUMNS } from "../shared/columns.js";
import { sqliteScope } from "../shared/scope.js";
import { nowIso } from "../shared/timestamps.js";
import type { SqliteDatabase } from "./database.js";
import { parseJsonColumn } from "./json-columns.js";

interface AssistantRow {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: string;
  context: string;
  metadata: string;
  version: number;
  created_at: string;
  updated_at?: string;
}

function fromRow(row: AssistantRow): Assistant;
function fromRow(row: AssistantRow, versionRow: true): AssistantVersion;
function fromRow(row: AssistantRow): Assistant | AssistantVersion {
  return {
    ...row,
    config: parseJsonColumn(row.config) ?? {},
    context: parseJsonColumn(row.context) ?? {},
    metadata: parseJsonColumn(row.metadata) ?? {},
  };
}

/** SQL WHERE clause and parameters of an assistant filter. */
function filterSql(filter: AssistantFilter): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const inScope = sqliteScope(filter.scope);
  if (inScope.sql) {
    clauses.push(inScope.sql.slice(" AND ".length));
    params.push(...inScope.params);
  }
  if (filter.graph_id !== undefined) {
    clauses.push("graph_id = ?");
    params.push(filter.graph_id);
  }
  if (filter.name !== undefined) {
    clauses.push("instr(lower(name), lower(?)) > 0");
    params.push(filter.name);
  }
  if (filter.metadata !== undefined && Object.keys(filter.metadata).length > 0) {
    clauses.push("json_contains(metadata, ?)");
    params.push(JSON.stringify(filter.metadata));
  }
  return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

export class SqliteAssistantRepository implements AssistantRepository {
  constructor(private readonly db: SqliteDatabase) {}

  async create(assistant: NewAssistant): Promise<Assistant | undefined> {
    const now = nowIso();
    return this.db
      .transaction(() => {
        const inserted = this.db
          .prepare(
            `INSERT INTO assistants (assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT (assistant_id) DO NOTHING`,
          )
          .run(
            assistant.assistant_id,
            assistant.graph_id,
            assistant.name,
            assistant.description,
            JSON.stringify(assistant.config),
            JSON.stringify(assistant.context),
            JSON.stringify(assistant.metadata),
            now,
            now,
          );
        if (inserted.changes === 0) return undefined;
        this.insertVersion(assistant.assistant_id, now);
        return this.getSync(assistant.assistant_id);
      })
      .immediate();
  }

  async get(assistantId: string, scope?: MetadataScope): Promise<Assistant | undefined> {
    return this.getSync(assistantId, scope);
  }

  async patch(assistantId: string, patch: AssistantPatch, scope?: MetadataScope): Promise<Assistant | undefined> {
    return this.db
      .transaction(() => {
        // Read under the write lock: the row checked in scope is the one updated.
        const current = this.getSync(assistantId, scope);
        if (!current) return undefined;
        const now = nowIso();
        const version =
          (
            this.db.prepare("SELECT max(version) AS v FROM assistant_versions WHERE assistant_id = ?").get(assistantId) as {
              v: number;
            }
          ).v + 1;
        this.db
          .prepare(
            `UPDATE assistants SET graph_id = ?, name = ?, description = ?, config = ?, context = ?, metadata = ?,
             version = ?, updated_at = ? WHERE assistant_id = ?`,
          )
          .run(
            patch.graph_id ?? current.graph_id,
            patch.name ?? current.name,
            patch.description === undefined ? current.description : patch.description,
            JSON.stringify(patch.config ?? current.config),
            JSON.stringify(patch.context ?? current.context),
            JSON.stringify({ ...current.metadata, ...patch.metadata }),
            version,
            now,
            assistantId,
          );
        this.insertVersion(assistantId, now);
        return this.getSync(assistantId);
      })
      .immediate();
  }

  async delete(assistantId: string, scope?: MetadataScope): Promise<boolean> {
    const inScope = sqliteScope(scope);
    return (
      this.db.prepare(`DELETE FROM assistants WHERE assistant_id = ?${inScope.sql}`).run(assistantId, ...inScope.params).changes >
      0
    );
  }

  async search(query: AssistantQuery): Promise<{ items: Assistant[]; total: number }> {
    const { where, params } = filterSql(query);
    const rows = this.db
      .prepare(
        `SELECT ${ASSISTANT_COLUMNS}, count(*) OVER () AS total FROM assistants ${where}
         ORDER BY ${query.sort_by} ${query.sort_order}, rowid ${query.sort_order} LIMIT ? OFFSET ?`,
      )
      .all(...params, query.limit, query.offset) as (AssistantRow & { total: number })[];
    const total = rows.length > 0 ? rows[0].total : await this.count(query);
    return { items: rows.map(({ total: _total, ...row }) => fromRow(row)), total };
  }

  async count(filter: AssistantFilter): Promise<number> {
    const { where, params } = filterSql(filter);
    return (this.db.prepare(`SELECT count(*) AS n FROM assistants ${where}`).get(...params) as { n: number }).n;
  }

  async versions(
    assistantId: string,
    query: { limit: number; offset: number; metadata?: JsonObject },
  ): Promise<AssistantVersion[]> {
    const metadataClause = query.metadata && Object.keys(query.metadata).length ? "AND json_contains(metadata, ?)" : "";
    const params: unknown[] = [assistantId];
    if (metadataClause) params.push(JSON.stringify(query.metadata));
    const rows = this.db
      .prepare(
        `SELECT ${ASSISTANT_VERSION_COLUMNS} FROM assistant_versions WHERE assistant_id = ? ${metadataClause}
         ORDER BY version DESC LIMIT ? OFFSET ?`,
      )
      .all(...params, query.limit, query.offset) as AssistantRow[];
    return rows.map((row) => fromRow(row, true));
  }

  async setLatest(assistantId: string, version: number, scope?: MetadataScope): Promise<Assistant | undefined> {
    // The scope applies to the assistant as it is, before the version replaces its metadata.
    const inScope = sqliteScope(scope);
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare(`SELECT ${ASSISTANT_VERSION_COLUMNS} FROM assistant_versions WHERE assistant_id = ? AND version = ?`)
          .get(assistantId, version) as AssistantRow | undefined;
        if (!row) return undefined;
        const updated = this.db
          .prepare(
            `UPDATE assistants SET graph_id = ?, name = ?, description = ?, config = ?, context = ?, metadata = ?,
             version = ?, updated_at = ? WHERE assistant_id = ?${inScope.sql}`,
          )
          .run(
            row.graph_id,
            row.name,
            row.description,
            row.config,
            row.context,
            row.metadata,
            version,
            nowIso(),
            assistantId,
            ...inScope.params,
          ).changes;
        return updated > 0 ? this.getSync(assistantId) : undefined;
      })
      .immediate();
  }

  private getSync(assistantId: string, scope?: MetadataScope): Assistant | undefined {
    const inScope = sqliteScope(scope);
    const row = this.db
      .prepare(`SELECT ${ASSISTANT_COLUMNS} FROM assistants WHERE assistant_id = ?${inScope.sql}`)
      .get(assistantId, ...inScope.params) as AssistantRow | undefined;
    return row && fromRow(row);
  }

  /** Snapshots the current assistant row as a version. */
  private insertVersion(assistantId: string, createdAt: string): void {
    this.db
      .prepare(
        `INSERT INTO assistant_versions (${ASSISTANT_VERSION_COLUMNS})
         SELECT assistant_id, version, graph_id, name, description, config, context, metadata, ? FROM assistants WHERE assistant_id = ?`,
      )
      .run(createdAt, assistantId);
  }
}
