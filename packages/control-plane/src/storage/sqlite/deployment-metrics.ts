import type { SqliteDatabase } from "@berth/service-kit";
import type { MetricSample } from "@berth/listener-protocol";
import type { DeploymentMetricStore } from "../types.js";
import { METRIC_COLUMNS, type MetricRow, sampleOf } from "../metric-columns.js";

export class SqliteDeploymentMetricStore implements DeploymentMetricStore {
  constructor(private readonly db: SqliteDatabase) {}

  async append(samples: MetricSample[]): Promise<void> {
    const insert = this.db.prepare(`INSERT INTO deployment_metrics (${METRIC_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.db
      .transaction(() => {
        for (const sample of samples) {
          insert.run(
            sample.deployment_id,
            sample.replica,
            sample.timestamp,
            sample.interval_seconds,
            sample.cpu_seconds,
            sample.memory_bytes,
            sample.pending_runs,
            sample.running_runs,
            sample.runs === null ? null : JSON.stringify(sample.runs),
          );
        }
      })
      .immediate();
  }

  async since(deploymentId: string, from: string): Promise<MetricSample[]> {
    const rows = this.db
      .prepare(
        `SELECT ${METRIC_COLUMNS} FROM deployment_metrics WHERE deployment_id = ? AND timestamp >= ? ORDER BY timestamp, id`,
      )
      .all(deploymentId, from) as (Omit<MetricRow, "runs"> & { runs: string | null })[];
    return rows.map((row) => sampleOf({ ...row, runs: row.runs === null ? null : JSON.parse(row.runs) }));
  }

  async prune(before: string): Promise<number> {
    return this.db.prepare("DELETE FROM deployment_metrics WHERE timestamp < ?").run(before).changes;
  }
}
