import { ConflictError, isUniqueViolation, withTransaction, type Queryable, jsonb, jsonbOrNull } from "@berth/service-kit";
import type pg from "pg";
import { IN_PROGRESS_REVISION_STATUSES, supersededMessages } from "@berth/listener-protocol";
import type {
  DeploymentChange,
  DeploymentFilter,
  DeploymentRecord,
  DeploymentReport,
  DeploymentStore,
  NewRevision,
  RevisionRecord,
  StatusCounts,
  TracingProjectRecord,
} from "../types.js";
import { recordMove, statusCounts } from "./revisions.js";
import { DEPLOYMENT, REVISION } from "../columns.js";

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
            deployment.listener_id,
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
        [
          jsonb(change.source_config),
          jsonbOrNull(change.secret_references),
          change.updated_at,
          revision?.id ?? null,
          deployment.id,
        ],
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

  async getAny(id: string): Promise<DeploymentRecord | undefined> {
    const { rows } = await this.pool.query<DeploymentRecord>(`SELECT ${DEPLOYMENT} FROM deployments WHERE id = $1`, [id]);
    return rows[0];
  }

  async assigned(listenerId: string | null): Promise<DeploymentRecord[]> {
    // Two shapes rather than IS NOT DISTINCT FROM, so that each can use its index.
    const { rows } =
      listenerId === null
        ? await this.pool.query<DeploymentRecord>(
            `SELECT ${DEPLOYMENT} FROM deployments WHERE listener_id IS NULL ORDER BY created_at, id`,
          )
        : await this.pool.query<DeploymentRecord>(
            `SELECT ${DEPLOYMENT} FROM deployments WHERE listener_id = $1 ORDER BY created_at, id`,
            [listenerId],
          );
    return rows;
  }

  async report(id: string, report: DeploymentReport, now: string): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<DeploymentRecord>(`SELECT ${DEPLOYMENT} FROM deployments WHERE id = $1 FOR UPDATE`, [
        id,
      ]);
      const current = rows[0];
      if (!current) return;
      const sourceConfig =
        report.custom_url === undefined ? current.source_config : { ...current.source_config, custom_url: report.custom_url };
      await client.query(
        `UPDATE deployments SET status = $1, active_revision_id = $2, image_version = $3, source_config = $4::jsonb, updated_at = $5
         WHERE id = $6`,
        [
          // A deleted deployment stays AWAITING_DELETE whatever its listener last saw.
          current.deleted_at ? current.status : (report.status ?? current.status),
          report.active_revision_id === undefined ? current.active_revision_id : report.active_revision_id,
          report.image_version === undefined ? current.image_version : report.image_version,
          jsonb(sourceConfig),
          now,
          id,
        ],
      );
    });
  }

  async purge(id: string): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      // Waits for an update or report of the deployment in flight.
      await client.query("SELECT 1 FROM deployments WHERE id = $1 FOR UPDATE", [id]);
      for (const table of ["revision_events", "status_conditions", "deployment_logs", "uploads", "revisions"]) {
        await client.query(`DELETE FROM ${table} WHERE deployment_id = $1`, [id]);
      }
      await client.query("DELETE FROM deployment_metrics WHERE deployment_id = $1", [id]);
      await client.query("UPDATE tracing_projects SET deployment_id = NULL WHERE deployment_id = $1", [id]);
      await client.query("DELETE FROM deployments WHERE id = $1 AND deleted_at IS NOT NULL", [id]);
    });
  }

  async countByStatus(): Promise<StatusCounts> {
    return statusCounts(this.pool, "deployments");
  }
}

/** Revisions still in progress end SKIPPED when a newer one arrives. */
async function supersede(client: Queryable, deploymentId: string, newer: NewRevision, number: number): Promise<void> {
  // Each superseded revision's timeline gets the step, in the same statement.
  const { waiting, other } = supersededMessages(newer, number);
  await client.query(
    `WITH superseded AS (
       UPDATE revisions SET status = 'SKIPPED', status_message = CASE WHEN status = 'CREATING' THEN $5 ELSE $1 END,
         updated_at = $2
       WHERE deployment_id = $3 AND status = ANY($4::text[]) RETURNING id, number, status_message
     )
     INSERT INTO revision_events (revision_id, deployment_id, at, status, message)
     SELECT id, $3, $2, 'SKIPPED', status_message FROM superseded ORDER BY number`,
    [other, newer.created_at, deploymentId, IN_PROGRESS_REVISION_STATUSES, waiting],
  );
}

/** Inserts a deployment's revision numbered `number`, with its first timeline step; the caller makes it the latest. */
async function insertRevision(
  client: Queryable,
  deployment: DeploymentRecord,
  revision: NewRevision,
  number: number,
): Promise<RevisionRecord> {
  const { rows } = await client.query<RevisionRecord>(
    `INSERT INTO revisions (id, deployment_id, tenant_id, number, status, status_message, source, source_revision_config,
       source_config, secret_references, secrets_ciphertext, artifact_revision_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10::jsonb, $11, $12, $13, $14) RETURNING ${REVISION}`,
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
      revision.artifact_revision_id,
      revision.created_at,
      revision.updated_at,
    ],
  );
  const record = rows[0];
  await recordMove(client, record.id, deployment.id, record.created_at, record.status, record.status_message);
  return record;
}
