import { ConflictError, isUniqueViolation, withTransaction, type Queryable, jsonb, jsonbOrNull } from "@berth/service-kit";
import type pg from "pg";
import { IN_PROGRESS_REVISION_STATUSES } from "../../domain/statuses.js";
import type {
  DeploymentChange,
  DeploymentFilter,
  DeploymentRecord,
  DeploymentStore,
  NewRevision,
  RevisionRecord,
  TracingProjectRecord,
} from "../types.js";
import { DEPLOYMENT, REVISION } from "./rows.js";

export class PostgresDeploymentStore implements DeploymentStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(deployment: DeploymentRecord, revision: NewRevision, project: TracingProjectRecord): Promise<void> {
    try {
      await withTransaction(this.pool, async (client) => {
        // A concurrent create of the same name waits here on the index entry, then fails on it.
        await client.query(
          `INSERT INTO deployments (id, tenant_id, name, source, source_config, secret_references, status, latest_revision_id,
             active_revision_id, image_version, listener_id, created_at, updated_at, deleted_at)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11, $12, $13, NULL)`,
          [
            deployment.id,
            deployment.tenant_id,
            deployment.name,
            deployment.source,
            jsonb(deployment.source_config),
            jsonbOrNull(deployment.secret_references),
            deployment.status,
            revision.id, // the first revision, inserted next, is the latest
            deployment.active_revision_id,
            deployment.image_version,
            (deployment.source_config.listener_id as string | null | undefined) ?? null,
            deployment.created_at,
            deployment.updated_at,
          ],
        );
        await insertRevision(client, deployment, revision, 1);
        await client.query(
          `INSERT INTO tracing_projects (id, tenant_id, name, deployment_id, created_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (tenant_id, name) DO UPDATE SET deployment_id = excluded.deployment_id`,
          [project.id, project.tenant_id, project.name, project.deployment_id, project.created_at],
        );
      });
    } catch (err) {
      if (isUniqueViolation(err, "deployments_live_name")) {
        throw new ConflictError(`A deployment named "${deployment.name}" already exists`);
      }
      throw err;
    }
  }

  async get(tenantId: string, id: string): Promise<DeploymentRecord | undefined> {
    const { rows } = await this.pool.query<DeploymentRecord>(
      `SELECT ${DEPLOYMENT} FROM deployments WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [tenantId, id],
    );
    return rows[0];
  }

  async list(tenantId: string, filter: DeploymentFilter): Promise<DeploymentRecord[]> {
    const values: unknown[] = [];
    const param = (value: unknown) => `$${values.push(value)}`;
    const where = [`tenant_id = ${param(tenantId)}`, "deleted_at IS NULL"];
    if (filter.name_contains) {
      // A plain substring (no LIKE wildcards), ASCII case-insensitive as SQLite's lower().
      where.push(`strpos(lower(name), lower(${param(filter.name_contains)}::text COLLATE "C")) > 0`);
    }
    if (filter.statuses?.length) where.push(`status = ANY(${param(filter.statuses)}::text[])`);
    if (filter.deployment_ids?.length) where.push(`id = ANY(${param(filter.deployment_ids)}::text[])`);
    if (filter.deployment_type) where.push(`source_config->>'deployment_type' = ${param(filter.deployment_type)}`);
    const { rows } = await this.pool.query<DeploymentRecord>(
      `SELECT ${DEPLOYMENT} FROM deployments WHERE ${where.join(" AND ")}
       ORDER BY created_at DESC, id DESC LIMIT ${param(filter.limit)} OFFSET ${param(filter.offset)}`,
      values,
    );
    return rows;
  }

  async update(
    tenantId: string,
    id: string,
    plan: (deployment: DeploymentRecord, latest: RevisionRecord) => DeploymentChange,
  ): Promise<{ deployment: DeploymentRecord; revision?: RevisionRecord } | undefined> {
    // The row lock makes concurrent updates take turns; `plan` is pure, so a
    // deadlock victim may run it again. When it throws, nothing is changed.
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<DeploymentRecord>(
        `SELECT ${DEPLOYMENT} FROM deployments WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`,
        [tenantId, id],
      );
      const deployment = rows[0];
      if (!deployment) return undefined;
      const latest = (
        await client.query<RevisionRecord>(`SELECT ${REVISION} FROM revisions WHERE id = $1`, [deployment.latest_revision_id])
      ).rows[0];
      const change = plan(deployment, latest);
      let revision: RevisionRecord | undefined;
      if (change.revision) {
        await supersede(client, deployment.id, change.revision, latest.number + 1);
        revision = await insertRevision(client, deployment, change.revision, latest.number + 1);
      }
      const updated = await client.query<DeploymentRecord>(
        `UPDATE deployments SET source_config = $1::jsonb, secret_references = $2::jsonb, updated_at = $3,
           latest_revision_id = coalesce($4, latest_revision_id)
         WHERE id = $5 RETURNING ${DEPLOYMENT}`,
        [jsonb(change.source_config), jsonbOrNull(change.secret_references), change.updated_at, revision?.id ?? null, deployment.id],
      );
      return { deployment: updated.rows[0], revision };
    });
  }

  async markDeleted(tenantId: string, ids: string[], deleteTracingProjects: boolean, now: string): Promise<string[]> {
    if (ids.length === 0) return [];
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: string }>(
        `UPDATE deployments SET status = 'AWAITING_DELETE', deleted_at = $1, updated_at = $1
         WHERE tenant_id = $2 AND id = ANY($3::text[]) AND deleted_at IS NULL RETURNING id`,
        [now, tenantId, ids],
      );
      const live = new Set(rows.map((row) => row.id));
      // In the order asked, each once (as SQLite's loop returns them).
      const deleted = [...new Set(ids)].filter((id) => live.has(id));
      if (deleteTracingProjects && deleted.length > 0) {
        await client.query("DELETE FROM tracing_projects WHERE deployment_id = ANY($1::text[])", [deleted]);
      }
      return deleted;
    });
  }
}

/** Revisions still in progress end SKIPPED when a newer one arrives. */
async function supersede(client: Queryable, deploymentId: string, newer: NewRevision, number: number): Promise<void> {
  await client.query(
    `UPDATE revisions SET status = 'SKIPPED', status_message = $1, updated_at = $2
     WHERE deployment_id = $3 AND status = ANY($4::text[])`,
    [`Superseded by revision ${number} (${newer.id})`, newer.created_at, deploymentId, IN_PROGRESS_REVISION_STATUSES],
  );
}

async function insertRevision(
  client: Queryable,
  deployment: DeploymentRecord,
  revision: NewRevision,
  number: number,
): Promise<RevisionRecord> {
  const { rows } = await client.query<RevisionRecord>(
    `INSERT INTO revisions (id, deployment_id, tenant_id, number, status, status_message, source, source_revision_config,
       source_config, secret_references, secrets_ciphertext, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10::jsonb, $11, $12, $13) RETURNING ${REVISION}`,
    [
      revision.id,
      deployment.id,
      deployment.tenant_id,
      number,
      revision.status,
      revision.status_message,
      revision.source,
      jsonb(revision.source_revision_config),
      jsonb(revision.source_config),
      jsonbOrNull(revision.secret_references),
      revision.secrets_ciphertext,
      revision.created_at,
      revision.updated_at,
    ],
  );
  return rows[0];
}
