import type pg from "pg";
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
import { ASSISTANT_COLUMNS, ASSISTANT_VERSION_COLUMNS, qualified } from "../shared/columns.js";
import { postgresScope, restricts } from "../shared/scope.js";
import { nowIso } from "../shared/timestamps.js";
import { withTransaction } from "./database.js";
import { jsonb } from "@berth/service-kit";
import { prepared } from "./prepared.js";

/** Sortable columns, whitelisted because they are interpolated. */
const SORT_COLUMNS: Record<AssistantQuery["sort_by"], string> = {
  assistant_id: "assistant_id",
  graph_id: "graph_id",
  name: "name",
  created_at: "created_at",
  updated_at: "updated_at",
};

/** WHERE clause of an assistant filter; its parameters are appended to `params`. */
function filterSql(filter: AssistantFilter, params: unknown[]): string {
  const clauses: string[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  if (restricts(filter.scope)) clauses.push(`metadata @> ${param(jsonb(filter.scope))}::jsonb`);
  if (filter.graph_id !== undefined) clauses.push(`graph_id = ${param(filter.graph_id)}`);
  if (filter.name !== undefined) {
    // COLLATE "C" makes lower() ASCII-only on both sides, like SQLite's lower().
    clauses.push(`strpos(lower(name), lower(${param(filter.name)} COLLATE "C")) > 0`);
  }
  if (filter.metadata !== undefined && Object.keys(filter.metadata).length > 0) {
    clauses.push(`metadata @> ${param(jsonb(filter.metadata))}::jsonb`);
  }
  return clauses.length ? `WHERE ${clauses.join(" AND ")}` : "";
}

export class PostgresAssistantRepository implements AssistantRepository {
  constructor(private readonly pool: pg.Pool) {}

  async create(assistant: NewAssistant): Promise<Assistant | undefined> {
    const now = nowIso();
    // One statement: the assistant and its version 1, or nothing when the id is taken.
    const { rows } = await this.pool.query<Assistant>(
      `WITH inserted AS (
         INSERT INTO assistants (assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, 1, $8, $8) ON CONFLICT (assistant_id) DO NOTHING
         RETURNING ${ASSISTANT_COLUMNS}
       ), first_version AS (
         INSERT INTO assistant_versions (${ASSISTANT_VERSION_COLUMNS}) SELECT ${ASSISTANT_VERSION_COLUMNS} FROM inserted
       )
       SELECT ${ASSISTANT_COLUMNS} FROM inserted`,
      [
        assistant.assistant_id,
        assistant.graph_id,
        assistant.name,
        assistant.description,
        jsonb(assistant.config),
        jsonb(assistant.context),
        jsonb(assistant.metadata),
        now,
      ],
    );
    return rows[0];
  }

  async get(assistantId: string, scope?: MetadataScope): Promise<Assistant | undefined> {
    const params: unknown[] = [assistantId];
    const inScope = postgresScope(scope, params);
    const { rows } = await prepared<Assistant>(
      this.pool,
      inScope ? "berth_get_assistant_scoped" : "berth_get_assistant",
      `SELECT ${ASSISTANT_COLUMNS} FROM assistants WHERE assistant_id = $1${inScope}`,
      params,
    );
    return rows[0];
  }

  async patch(assistantId: string, patch: AssistantPatch, scope?: MetadataScope): Promise<Assistant | undefined> {
    const params: unknown[] = [assistantId];
    const inScope = postgresScope(scope, params);
    return withTransaction(this.pool, async (client) => {
      // The row lock orders concurrent patches, so each gets the next version number,
      // and keeps the metadata checked in scope until the update.
      const current = (
        await client.query<Assistant>(
          `SELECT ${ASSISTANT_COLUMNS} FROM assistants WHERE assistant_id = $1${inScope} FOR UPDATE`,
          params,
        )
      ).rows[0];
      if (!current) return undefined;
      const now = nowIso();
      const { rows } = await client.query<Assistant>(
        `UPDATE assistants SET graph_id = $2, name = $3, description = $4, config = $5::jsonb, context = $6::jsonb,
           metadata = $7::jsonb, updated_at = $8,
           version = (SELECT max(version) + 1 FROM assistant_versions WHERE assistant_id = $1)
         WHERE assistant_id = $1 RETURNING ${ASSISTANT_COLUMNS}`,
        [
          assistantId,
          patch.graph_id ?? current.graph_id,
          patch.name ?? current.name,
          patch.description === undefined ? current.description : patch.description,
          jsonb(patch.config ?? current.config),
          jsonb(patch.context ?? current.context),
          jsonb({ ...current.metadata, ...patch.metadata }),
          now,
        ],
      );
      await client.query(
        `INSERT INTO assistant_versions (${ASSISTANT_VERSION_COLUMNS})
         SELECT assistant_id, version, graph_id, name, description, config, context, metadata, $2 FROM assistants WHERE assistant_id = $1`,
        [assistantId, now],
      );
      return rows[0];
    });
  }

  async delete(assistantId: string, scope?: MetadataScope): Promise<boolean> {
    const params: unknown[] = [assistantId];
    const inScope = postgresScope(scope, params);
    return ((await this.pool.query(`DELETE FROM assistants WHERE assistant_id = $1${inScope}`, params)).rowCount ?? 0) > 0;
  }

  async search(query: AssistantQuery): Promise<{ items: Assistant[]; total: number }> {
    const params: unknown[] = [];
    const where = filterSql(query, params);
    const order = query.sort_order === "desc" ? "DESC" : "ASC";
    const { rows } = await this.pool.query<Assistant & { total: number }>(
      `SELECT ${ASSISTANT_COLUMNS}, count(*) OVER () AS total FROM assistants ${where}
       ORDER BY ${SORT_COLUMNS[query.sort_by]} ${order}, seq ${order}
       LIMIT $${params.push(query.limit)} OFFSET $${params.push(query.offset)}`,
      params,
    );
    const total = rows.length > 0 ? rows[0].total : await this.count(query);
    return { items: rows.map(({ total: _total, ...assistant }) => assistant), total };
  }

  async count(filter: AssistantFilter): Promise<number> {
    const params: unknown[] = [];
    const where = filterSql(filter, params);
    return (await this.pool.query<{ n: number }>(`SELECT count(*) AS n FROM assistants ${where}`, params)).rows[0].n;
  }

  async versions(
    assistantId: string,
    query: { limit: number; offset: number; metadata?: JsonObject },
  ): Promise<AssistantVersion[]> {
    const params: unknown[] = [assistantId];
    const metadataClause =
      query.metadata && Object.keys(query.metadata).length ? `AND metadata @> $${params.push(jsonb(query.metadata))}::jsonb` : "";
    const { rows } = await this.pool.query<AssistantVersion>(
      `SELECT ${ASSISTANT_VERSION_COLUMNS} FROM assistant_versions WHERE assistant_id = $1 ${metadataClause}
       ORDER BY version DESC LIMIT $${params.push(query.limit)} OFFSET $${params.push(query.offset)}`,
      params,
    );
    return rows;
  }

  async setLatest(assistantId: string, version: number, scope?: MetadataScope): Promise<Assistant | undefined> {
    // One statement: no row when the version does not exist, or the assistant as it is now is out of scope.
    const params: unknown[] = [assistantId, version, nowIso()];
    const inScope = postgresScope(scope, params, "a.metadata");
    const { rows } = await this.pool.query<Assistant>(
      `UPDATE assistants a SET graph_id = v.graph_id, name = v.name, description = v.description, config = v.config,
         context = v.context, metadata = v.metadata, version = v.version, updated_at = $3
       FROM assistant_versions v WHERE a.assistant_id = $1 AND v.assistant_id = $1 AND v.version = $2${inScope}
       RETURNING ${qualified("a", ASSISTANT_COLUMNS)}`,
      params,
    );
    return rows[0];
  }
}
