import type { SqliteDatabase } from "@berth/service-kit";
import type { Condition, ObservedDeployment } from "@berth/listener-protocol";
import { orderedConditions, orderedObserved } from "../columns.js";
import type { ConditionChange, ConditionStore } from "../types.js";
import { toJson } from "./rows.js";

export class SqliteConditionStore implements ConditionStore {
  constructor(private readonly db: SqliteDatabase) {}

  async conditionsOf(ids: readonly string[]): Promise<Map<string, Condition[]>> {
    if (ids.length === 0) return new Map();
    const rows = this.db
      .prepare(`SELECT subject_id, conditions FROM status_conditions WHERE subject_id IN (${ids.map(() => "?").join(", ")})`)
      .all(...ids) as { subject_id: string; conditions: string }[];
    return new Map(rows.map((row) => [row.subject_id, orderedConditions(JSON.parse(row.conditions) as Condition[])]));
  }

  async observedOf(deploymentIds: readonly string[]): Promise<Map<string, ObservedDeployment>> {
    if (deploymentIds.length === 0) return new Map();
    const rows = this.db
      .prepare(
        `SELECT subject_id, observed FROM status_conditions
         WHERE subject_id IN (${deploymentIds.map(() => "?").join(", ")}) AND observed IS NOT NULL`,
      )
      .all(...deploymentIds) as { subject_id: string; observed: string }[];
    return new Map(rows.map((row) => [row.subject_id, orderedObserved(JSON.parse(row.observed) as ObservedDeployment)!]));
  }

  async record(deploymentId: string, change: ConditionChange): Promise<void> {
    const upsert = this.db.prepare(
      `INSERT INTO status_conditions (subject_id, deployment_id, conditions, observed) VALUES (?, ?, ?, ?)
       ON CONFLICT (subject_id) DO UPDATE SET conditions = excluded.conditions,
         observed = CASE WHEN ? THEN excluded.observed ELSE status_conditions.observed END`,
    );
    this.db
      .transaction(() => {
        const observes = change.observed !== undefined;
        upsert.run(deploymentId, deploymentId, toJson(change.conditions), toJson(change.observed), observes ? 1 : 0);
        for (const revision of change.revisions) upsert.run(revision.id, deploymentId, toJson(revision.conditions), null, 0);
        this.db.prepare("UPDATE deployments SET status = ? WHERE id = ? AND deleted_at IS NULL").run(change.status, deploymentId);
      })
      .immediate();
  }
}
