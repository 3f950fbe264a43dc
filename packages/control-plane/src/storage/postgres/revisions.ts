import type pg from "pg";
import type { RevisionStatus } from "../../domain/statuses.js";
import type { RevisionFilter, RevisionRecord, RevisionStore } from "../types.js";
import { REVISION, qualified } from "./rows.js";

const R = qualified(REVISION, "r");

export class PostgresRevisionStore implements RevisionStore {
  constructor(private readonly pool: pg.Pool) {}

  async get(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionRecord | undefined> {
    const { rows } = await this.pool.query<RevisionRecord>(
      `SELECT ${R} FROM revisions r JOIN deployments d ON d.id = r.deployment_id
       WHERE r.id = $1 AND r.deployment_id = $2 AND d.tenant_id = $3 AND d.deleted_at IS NULL`,
      [revisionId, deploymentId, tenantId],
    );
    return rows[0];
  }

  async list(tenantId: string, deploymentId: string, filter: RevisionFilter): Promise<RevisionRecord[]> {
    const values: unknown[] = [deploymentId, tenantId];
    const param = (value: unknown) => `$${values.push(value)}`;
    const statuses = filter.statuses?.length ? `AND r.status = ANY(${param(filter.statuses)}::text[])` : "";
    const { rows } = await this.pool.query<RevisionRecord>(
      `SELECT ${R} FROM revisions r JOIN deployments d ON d.id = r.deployment_id
       WHERE r.deployment_id = $1 AND d.tenant_id = $2 AND d.deleted_at IS NULL ${statuses}
       ORDER BY r.number DESC LIMIT ${param(filter.limit)} OFFSET ${param(filter.offset)}`,
      values,
    );
    return rows;
  }

  async latest(deploymentId: string): Promise<RevisionRecord | undefined> {
    const { rows } = await this.pool.query<RevisionRecord>(
      `SELECT ${REVISION} FROM revisions WHERE deployment_id = $1 ORDER BY number DESC LIMIT 1`,
      [deploymentId],
    );
    return rows[0];
  }

  async transition(
    revisionId: string,
    from: RevisionStatus[],
    status: RevisionStatus,
    message: string,
    now: string,
  ): Promise<RevisionRecord | undefined> {
    if (from.length === 0) return undefined;
    // One statement: the row lock and the status check are atomic.
    const { rows } = await this.pool.query<RevisionRecord>(
      `UPDATE revisions SET status = $1, status_message = $2, updated_at = $3
       WHERE id = $4 AND status = ANY($5::text[]) RETURNING ${REVISION}`,
      [status, message, now, revisionId, from],
    );
    return rows[0];
  }
}
