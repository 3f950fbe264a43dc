import type { Queryable } from "@berth/service-kit";
import type pg from "pg";
import type { RevisionEventInput, RevisionFacts } from "@berth/listener-protocol";
import type { RevisionStatus } from "@berth/listener-protocol";
import type {
  EventAlongside,
  RevisionEventRecord,
  RevisionFilter,
  RevisionRecord,
  RevisionStore,
  StatusCounts,
} from "../types.js";
import { REVISION, REVISION_EVENT, qualified } from "../columns.js";

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

  async latestOfEach(deploymentIds: readonly string[]): Promise<Map<string, RevisionRecord>> {
    if (deploymentIds.length === 0) return new Map();
    const { rows } = await this.pool.query<RevisionRecord>(
      `SELECT DISTINCT ON (deployment_id) ${REVISION} FROM revisions WHERE deployment_id = ANY($1)
       ORDER BY deployment_id, number DESC`,
      [deploymentIds],
    );
    return new Map(rows.map((row) => [row.deployment_id, row]));
  }

  async getAny(revisionId: string): Promise<RevisionRecord | undefined> {
    const { rows } = await this.pool.query<RevisionRecord>(`SELECT ${REVISION} FROM revisions WHERE id = $1`, [revisionId]);
    return rows[0];
  }

  async inStatuses(deploymentId: string, statuses: readonly RevisionStatus[]): Promise<RevisionRecord[]> {
    if (statuses.length === 0) return [];
    const { rows } = await this.pool.query<RevisionRecord>(
      `SELECT ${REVISION} FROM revisions WHERE deployment_id = $1 AND status = ANY($2::text[]) ORDER BY number DESC`,
      [deploymentId, statuses],
    );
    return rows;
  }

  async events(revisionId: string): Promise<RevisionEventRecord[]> {
    const { rows } = await this.pool.query<RevisionEventRecord>(
      `SELECT ${REVISION_EVENT} FROM revision_events WHERE revision_id = $1 ORDER BY id`,
      [revisionId],
    );
    return rows;
  }

  async transition(
    revisionId: string,
    from: RevisionStatus[],
    status: RevisionStatus,
    message: string,
    now: string,
    facts: RevisionFacts = {},
    alongside?: EventAlongside,
  ): Promise<RevisionRecord | undefined> {
    if (from.length === 0) return undefined;
    // One statement: the row lock, the status check, the timeline step and the event alongside are atomic.
    const { rows } = await this.pool.query<RevisionRecord>(
      `WITH moved AS (
         UPDATE revisions SET status = $1, status_message = $2, updated_at = $3, image_digest = COALESCE($6, image_digest),
           source_revision_config = CASE WHEN $7::text IS NULL THEN source_revision_config
             ELSE jsonb_set(source_revision_config, '{repo_commit_sha}', to_jsonb($7::text)) END
         WHERE id = $4 AND status = ANY($5::text[]) RETURNING ${REVISION}
       ), step AS (
         INSERT INTO revision_events (revision_id, deployment_id, at, status, message)
         SELECT id, deployment_id, $3, $1, $2 FROM moved
       ), noted AS (
         UPDATE revisions SET status_message = $9, updated_at = $3
         WHERE id = $8 AND EXISTS (SELECT 1 FROM moved) RETURNING id, deployment_id, status
       ), noted_step AS (
         INSERT INTO revision_events (revision_id, deployment_id, at, status, message, type, reason)
         SELECT id, deployment_id, $3, status, $9, $10, $11 FROM noted
       )
       SELECT ${REVISION} FROM moved`,
      [
        status,
        message,
        now,
        revisionId,
        from,
        facts.image_digest ?? null,
        facts.repo_commit_sha ?? null,
        alongside?.revisionId ?? null,
        alongside?.event.message ?? null,
        alongside?.event.type ?? null,
        alongside?.event.reason ?? null,
      ],
    );
    return rows[0];
  }

  async recordEvent(revisionId: string, event: RevisionEventInput, now: string, statusMessage?: string): Promise<boolean> {
    // One statement: the status the event is recorded with is the one the message is set beside.
    const { rowCount } = await this.pool.query(
      `WITH noted AS (
         UPDATE revisions SET status_message = COALESCE($6, status_message),
           updated_at = CASE WHEN $6::text IS NULL THEN updated_at ELSE $2 END
         WHERE id = $1 RETURNING id, deployment_id, status
       )
       INSERT INTO revision_events (revision_id, deployment_id, at, status, message, type, reason)
       SELECT id, deployment_id, $2, status, $3, $4, $5 FROM noted`,
      [revisionId, now, event.message, event.type, event.reason, statusMessage ?? null],
    );
    return rowCount === 1;
  }

  async countByStatus(): Promise<StatusCounts> {
    return statusCounts(this.pool, "revisions");
  }
}

/** Rows of `table` per status (one scan: read at each metrics scrape). */
export async function statusCounts(db: Queryable, table: "deployments" | "revisions"): Promise<StatusCounts> {
  const { rows } = await db.query<{ status: string; count: string }>(
    `SELECT status, COUNT(*) AS count FROM ${table} GROUP BY status`,
  );
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}

/** Adds a move to a revision's timeline (inside the caller's transaction). */
export async function recordMove(
  client: Queryable,
  revisionId: string,
  deploymentId: string,
  at: string,
  status: string,
  message: string,
): Promise<void> {
  await client.query(
    "INSERT INTO revision_events (revision_id, deployment_id, at, status, message) VALUES ($1, $2, $3, $4, $5)",
    [revisionId, deploymentId, at, status, message],
  );
}
