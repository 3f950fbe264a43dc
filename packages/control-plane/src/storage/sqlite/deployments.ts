import { ConflictError, type SqliteDatabase } from "@berth/service-kit";
import { IN_PROGRESS_REVISION_STATUSES, supersededMessages } from "@berth/listener-protocol";
import { DEPLOYMENT, REVISION } from "../columns.js";
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
import { deploymentFromRow, revisionFromRow, toJson } from "./rows.js";

type Row = Record<string, unknown>;

export class SqliteDeploymentStore implements DeploymentStore {
  constructor(private readonly db: SqliteDatabase) {}

  async create(deployment: DeploymentRecord, revision: NewRevision, project: TracingProjectRecord): Promise<void> {
    this.db
      .transaction(() => {
        const taken = this.db
          .prepare("SELECT 1 FROM deployments WHERE tenant_id = ? AND name = ? AND deleted_at IS NULL")
          .get(deployment.tenant_id, deployment.name);
        if (taken) throw new ConflictError(`A deployment named "${deployment.name}" already exists`);
        this.db
          .prepare(
            `INSERT INTO deployments (id, tenant_id, name, source, source_config, secret_references, status, latest_revision_id,
             active_revision_id, image_version, listener_id, created_at, updated_at, deleted_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
          )
          .run(
            deployment.id,
            deployment.tenant_id,
            deployment.name,
            deployment.source,
            toJson(deployment.source_config),
            toJson(deployment.secret_references),
            deployment.status,
            revision.id, // the first revision, inserted next, is the latest
            deployment.active_revision_id,
            deployment.image_version,
            deployment.listener_id,
            deployment.created_at,
            deployment.updated_at,
          );
        insertRevision(this.db, deployment, revision, 1);
        this.db
          .prepare(
            `INSERT INTO tracing_projects (id, tenant_id, name, deployment_id, created_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (tenant_id, name) DO UPDATE SET deployment_id = excluded.deployment_id`,
          )
          .run(project.id, project.tenant_id, project.name, project.deployment_id, project.created_at);
      })
      .immediate();
  }

  async get(tenantId: string, id: string): Promise<DeploymentRecord | undefined> {
    const row = this.db
      .prepare(`SELECT ${DEPLOYMENT} FROM deployments WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL`)
      .get(tenantId, id) as Row | undefined;
    return row && deploymentFromRow(row);
  }

  async list(tenantId: string, filter: DeploymentFilter): Promise<DeploymentRecord[]> {
    const where = ["tenant_id = ?", "deleted_at IS NULL"];
    const values: unknown[] = [tenantId];
    if (filter.name_contains) {
      where.push("instr(lower(name), lower(?)) > 0");
      values.push(filter.name_contains);
    }
    if (filter.statuses?.length) {
      where.push(`status IN (${filter.statuses.map(() => "?").join(", ")})`);
      values.push(...filter.statuses);
    }
    if (filter.deployment_ids?.length) {
      where.push(`id IN (${filter.deployment_ids.map(() => "?").join(", ")})`);
      values.push(...filter.deployment_ids);
    }
    if (filter.deployment_type) {
      where.push("json_extract(source_config, '$.deployment_type') = ?");
      values.push(filter.deployment_type);
    }
    const rows = this.db
      .prepare(
        `SELECT ${DEPLOYMENT} FROM deployments WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
      )
      .all(...values, filter.limit, filter.offset) as Row[];
    return rows.map(deploymentFromRow);
  }

  async update(
    tenantId: string,
    id: string,
    plan: (deployment: DeploymentRecord, latest: RevisionRecord) => DeploymentChange,
  ): Promise<{ deployment: DeploymentRecord; revision?: RevisionRecord } | undefined> {
    // IMMEDIATE takes the write lock before reading: another process's update waits (busy_timeout)
    // instead of failing on the read-to-write upgrade, and sees this one's result.
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare(`SELECT ${DEPLOYMENT} FROM deployments WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL`)
          .get(tenantId, id) as Row | undefined;
        if (!row) return undefined;
        const deployment = deploymentFromRow(row);
        const latest = revisionFromRow(
          this.db.prepare(`SELECT ${REVISION} FROM revisions WHERE id = ?`).get(deployment.latest_revision_id) as Row,
        );
        const change = plan(deployment, latest);
        let revision: RevisionRecord | undefined;
        if (change.revision) {
          supersede(this.db, deployment.id, change.revision, latest.number + 1);
          revision = insertRevision(this.db, deployment, change.revision, latest.number + 1);
        }
        const updated = this.db
          .prepare(
            `UPDATE deployments SET source_config = ?, secret_references = ?, updated_at = ?,
               latest_revision_id = coalesce(?, latest_revision_id)
             WHERE id = ? RETURNING ${DEPLOYMENT}`,
          )
          .get(
            toJson(change.source_config),
            toJson(change.secret_references),
            change.updated_at,
            revision?.id ?? null,
            deployment.id,
          ) as Row;
        return { deployment: deploymentFromRow(updated), revision };
      })
      .immediate();
  }

  async markDeleted(tenantId: string, ids: string[], deleteTracingProjects: boolean, now: string): Promise<string[]> {
    return this.db
      .transaction(() => {
        const deleted: string[] = [];
        for (const id of ids) {
          const result = this.db
            .prepare(
              `UPDATE deployments SET status = 'AWAITING_DELETE', deleted_at = ?, updated_at = ?
             WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL`,
            )
            .run(now, now, tenantId, id);
          if (result.changes === 0) continue;
          deleted.push(id);
          if (deleteTracingProjects) this.db.prepare("DELETE FROM tracing_projects WHERE deployment_id = ?").run(id);
        }
        return deleted;
      })
      .immediate();
  }

  async getAny(id: string): Promise<DeploymentRecord | undefined> {
    const row = this.db.prepare(`SELECT ${DEPLOYMENT} FROM deployments WHERE id = ?`).get(id) as Row | undefined;
    return row && deploymentFromRow(row);
  }

  async assigned(listenerId: string | null): Promise<DeploymentRecord[]> {
    const rows = this.db
      .prepare(`SELECT ${DEPLOYMENT} FROM deployments WHERE listener_id IS ? ORDER BY created_at, id`)
      .all(listenerId) as Row[];
    return rows.map(deploymentFromRow);
  }

  async report(id: string, report: DeploymentReport, now: string): Promise<void> {
    this.db
      .transaction(() => {
        const row = this.db.prepare(`SELECT ${DEPLOYMENT} FROM deployments WHERE id = ?`).get(id) as Row | undefined;
        if (!row) return;
        const current = deploymentFromRow(row);
        const sourceConfig =
          report.custom_url === undefined ? current.source_config : { ...current.source_config, custom_url: report.custom_url };
        this.db
          .prepare(
            `UPDATE deployments SET status = ?, active_revision_id = ?, image_version = ?, source_config = ?, updated_at = ?
           WHERE id = ?`,
          )
          .run(
            // A deleted deployment stays AWAITING_DELETE whatever its listener last saw.
            current.deleted_at ? current.status : (report.status ?? current.status),
            report.active_revision_id === undefined ? current.active_revision_id : report.active_revision_id,
            report.image_version === undefined ? current.image_version : report.image_version,
            toJson(sourceConfig),
            now,
            id,
          );
      })
      .immediate();
  }

  async purge(id: string): Promise<void> {
    this.db
      .transaction(() => {
        for (const table of ["revision_events", "status_conditions", "deployment_logs", "uploads", "revisions"]) {
          this.db.prepare(`DELETE FROM ${table} WHERE deployment_id = ?`).run(id);
        }
        this.db.prepare("DELETE FROM deployment_metrics WHERE deployment_id = ?").run(id);
        this.db.prepare("UPDATE tracing_projects SET deployment_id = NULL WHERE deployment_id = ?").run(id);
        this.db.prepare("DELETE FROM deployments WHERE id = ? AND deleted_at IS NOT NULL").run(id);
      })
      .immediate();
  }

  async countByStatus(): Promise<StatusCounts> {
    return statusCounts(this.db, "deployments");
  }
}

/** Revisions still in progress end SKIPPED when a newer one arrives. */
function supersede(db: SqliteDatabase, deploymentId: string, newer: NewRevision, number: number): void {
  const { waiting, other } = supersededMessages(newer, number);
  const superseded = db
    .prepare(
      `UPDATE revisions SET status = 'SKIPPED', status_message = CASE WHEN status = 'CREATING' THEN ? ELSE ? END, updated_at = ?
       WHERE deployment_id = ? AND status IN (${IN_PROGRESS_REVISION_STATUSES.map(() => "?").join(", ")})
       RETURNING id, status_message`,
    )
    .all(waiting, other, newer.created_at, deploymentId, ...IN_PROGRESS_REVISION_STATUSES) as {
    id: string;
    status_message: string;
  }[];
  for (const { id, status_message } of superseded) recordMove(db, id, deploymentId, newer.created_at, "SKIPPED", status_message);
}

/** Inserts a deployment's revision numbered `number`, with its first timeline step; the caller makes it the latest. */
function insertRevision(db: SqliteDatabase, deployment: DeploymentRecord, revision: NewRevision, number: number): RevisionRecord {
  const row = db
    .prepare(
      `INSERT INTO revisions (id, deployment_id, tenant_id, number, status, status_message, source, source_revision_config,
         source_config, secret_references, secrets_ciphertext, artifact_revision_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${REVISION}`,
    )
    .get(
      revision.id,
      deployment.id,
      deployment.tenant_id,
      number,
      revision.status,
      revision.status_message,
      revision.source,
      toJson(revision.source_revision_config),
      toJson(revision.source_config),
      toJson(revision.secret_references),
      revision.secrets_ciphertext,
      revision.artifact_revision_id,
      revision.created_at,
      revision.updated_at,
    ) as Row;
  const record = revisionFromRow(row);
  recordMove(db, record.id, deployment.id, record.created_at, record.status, record.status_message);
  return record;
}
