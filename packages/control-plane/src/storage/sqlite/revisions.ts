import type { SqliteDatabase } from "@berth/service-kit";
import type { RevisionEventInput, RevisionFacts } from "@berth/listener-protocol";
import type { RevisionStatus } from "@berth/listener-protocol";
import { qualified, REVISION, REVISION_EVENT } from "../columns.js";
import type {
  EventAlongside,
  RevisionEventRecord,
  RevisionFilter,
  RevisionRecord,
  RevisionStore,
  StatusCounts,
} from "../types.js";
import { revisionFromRow } from "./rows.js";

type Row = Record<string, unknown>;

const R = qualified(REVISION, "r");

export class SqliteRevisionStore implements RevisionStore {
  constructor(private readonly db: SqliteDatabase) {}

  async get(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionRecord | undefined> {
    const row = this.db
      .prepare(
        `SELECT ${R} FROM revisions r JOIN deployments d ON d.id = r.deployment_id
         WHERE r.id = ? AND r.deployment_id = ? AND d.tenant_id = ? AND d.deleted_at IS NULL`,
      )
      .get(revisionId, deploymentId, tenantId) as Row | undefined;
    return row && revisionFromRow(row);
  }

  async list(tenantId: string, deploymentId: string, filter: RevisionFilter): Promise<RevisionRecord[]> {
    const statuses = filter.statuses?.length ? `AND r.status IN (${filter.statuses.map(() => "?").join(", ")})` : "";
    const rows = this.db
      .prepare(
        `SELECT ${R} FROM revisions r JOIN deployments d ON d.id = r.deployment_id
         WHERE r.deployment_id = ? AND d.tenant_id = ? AND d.deleted_at IS NULL ${statuses}
         ORDER BY r.number DESC LIMIT ? OFFSET ?`,
      )
      .all(deploymentId, tenantId, ...(filter.statuses ?? []), filter.limit, filter.offset) as Row[];
    return rows.map(revisionFromRow);
  }

  async latest(deploymentId: string): Promise<RevisionRecord | undefined> {
    const row = this.db
      .prepare(`SELECT ${REVISION} FROM revisions WHERE deployment_id = ? ORDER BY number DESC LIMIT 1`)
      .get(deploymentId) as Row | undefined;
    return row && revisionFromRow(row);
  }

  async latestOfEach(deploymentIds: readonly string[]): Promise<Map<string, RevisionRecord>> {
    if (deploymentIds.length === 0) return new Map();
    const rows = this.db
      .prepare(
        `SELECT ${R} FROM revisions r
         WHERE r.deployment_id IN (${deploymentIds.map(() => "?").join(", ")})
           AND r.number = (SELECT MAX(number) FROM revisions WHERE deployment_id = r.deployment_id)`,
      )
      .all(...deploymentIds) as Row[];
    return new Map(rows.map((row) => [row.deployment_id as string, revisionFromRow(row)]));
  }

  async getAny(revisionId: string): Promise<RevisionRecord | undefined> {
    const row = this.db.prepare(`SELECT ${REVISION} FROM revisions WHERE id = ?`).get(revisionId) as Row | undefined;
    return row && revisionFromRow(row);
  }

  async inStatuses(deploymentId: string, statuses: readonly RevisionStatus[]): Promise<RevisionRecord[]> {
    if (statuses.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT ${REVISION} FROM revisions WHERE deployment_id = ? AND status IN (${statuses.map(() => "?").join(", ")})
         ORDER BY number DESC`,
      )
      .all(deploymentId, ...statuses) as Row[];
    return rows.map(revisionFromRow);
  }

  async events(revisionId: string): Promise<RevisionEventRecord[]> {
    return this.db
      .prepare(`SELECT ${REVISION_EVENT} FROM revision_events WHERE revision_id = ? ORDER BY id`)
      .all(revisionId) as RevisionEventRecord[];
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
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare(
            `UPDATE revisions SET status = ?, status_message = ?, updated_at = ?, image_digest = COALESCE(?, image_digest),
               source_revision_config = CASE WHEN ? IS NULL THEN source_revision_config
                 ELSE json_set(source_revision_config, '$.repo_commit_sha', ?) END
           WHERE id = ? AND status IN (${from.map(() => "?").join(", ")}) RETURNING ${REVISION}`,
          )
          .get(
            status,
            message,
            now,
            facts.image_digest ?? null,
            facts.repo_commit_sha ?? null,
            facts.repo_commit_sha ?? null,
            revisionId,
            ...from,
          ) as Row | undefined;
        if (!row) return undefined;
        const revision = revisionFromRow(row);
        recordMove(this.db, revision.id, revision.deployment_id, now, status, message);
        if (alongside) this.noteEvent(alongside.revisionId, alongside.event, now, alongside.event.message);
        return revision;
      })
      .immediate();
  }

  async recordEvent(revisionId: string, event: RevisionEventInput, now: string, statusMessage?: string): Promise<boolean> {
    return this.db.transaction(() => this.noteEvent(revisionId, event, now, statusMessage)).immediate();
  }

  /** The event on the revision's timeline, and its status_message (inside the caller's transaction). */
  private noteEvent(revisionId: string, event: RevisionEventInput, now: string, statusMessage?: string): boolean {
    const recorded = this.db
      .prepare(
        `INSERT INTO revision_events (revision_id, deployment_id, at, status, message, type, reason)
         SELECT id, deployment_id, ?, status, ?, ?, ? FROM revisions WHERE id = ?`,
      )
      .run(now, event.message, event.type, event.reason, revisionId);
    if (recorded.changes === 0) return false;
    if (statusMessage !== undefined)
      this.db.prepare("UPDATE revisions SET status_message = ?, updated_at = ? WHERE id = ?").run(statusMessage, now, revisionId);
    return true;
  }

  async countByStatus(): Promise<StatusCounts> {
    return statusCounts(this.db, "revisions");
  }
}

/** Rows of `table` per status (one scan: read at each metrics scrape). */
export function statusCounts(db: SqliteDatabase, table: "deployments" | "revisions"): StatusCounts {
  const rows = db.prepare(`SELECT status, COUNT(*) AS count FROM ${table} GROUP BY status`).all() as Row[];
  return Object.fromEntries(rows.map((row) => [String(row.status), Number(row.count)]));
}

/** Adds a move to a revision's timeline (inside the caller's transaction). */
export function recordMove(
  db: SqliteDatabase,
  revisionId: string,
  deploymentId: string,
  at: string,
  status: string,
  message: string,
): void {
  db.prepare("INSERT INTO revision_events (revision_id, deployment_id, at, status, message) VALUES (?, ?, ?, ?, ?)").run(
    revisionId,
    deploymentId,
    at,
    status,
    message,
  );
}
