import { jsonb, jsonbOrNull, withTransaction } from "@berth/service-kit";
import type pg from "pg";
import type { Condition, ObservedDeployment } from "@berth/listener-protocol";
import { orderedConditions, orderedObserved } from "../columns.js";
import type { ConditionChange, ConditionStore } from "../types.js";

const UPSERT = `INSERT INTO status_conditions (subject_id, deployment_id, conditions, observed) VALUES ($1, $2, $3::jsonb, $4::jsonb)
  ON CONFLICT (subject_id) DO UPDATE SET conditions = excluded.conditions,
    observed = CASE WHEN $5 THEN excluded.observed ELSE status_conditions.observed END`;

export class PostgresConditionStore implements ConditionStore {
  constructor(private readonly pool: pg.Pool) {}

  async conditionsOf(ids: readonly string[]): Promise<Map<string, Condition[]>> {
    if (ids.length === 0) return new Map();
    const { rows } = await this.pool.query<{ subject_id: string; conditions: Condition[] }>(
      "SELECT subject_id, conditions FROM status_conditions WHERE subject_id = ANY($1::text[])",
      [ids],
    );
    return new Map(rows.map((row) => [row.subject_id, orderedConditions(row.conditions)]));
  }

  async observedOf(deploymentIds: readonly string[]): Promise<Map<string, ObservedDeployment>> {
    if (deploymentIds.length === 0) return new Map();
    const { rows } = await this.pool.query<{ subject_id: string; observed: ObservedDeployment }>(
      "SELECT subject_id, observed FROM status_conditions WHERE subject_id = ANY($1::text[]) AND observed IS NOT NULL",
      [deploymentIds],
    );
    return new Map(rows.map((row) => [row.subject_id, orderedObserved(row.observed)!]));
  }

  async record(deploymentId: string, change: ConditionChange): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      const observes = change.observed !== undefined;
      await client.query(UPSERT, [deploymentId, deploymentId, jsonb(change.conditions), jsonbOrNull(change.observed), observes]);
      for (const revision of change.revisions)
        await client.query(UPSERT, [revision.id, deploymentId, jsonb(revision.conditions), null, false]);
      await client.query("UPDATE deployments SET status = $1 WHERE id = $2 AND deleted_at IS NULL", [
        change.status,
        deploymentId,
      ]);
    });
  }
}
