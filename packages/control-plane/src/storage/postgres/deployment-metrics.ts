import { jsonbOrNull } from "@berth/service-kit";
import type { MetricSample } from "@berth/listener-protocol";
import type pg from "pg";
import type { DeploymentMetricStore } from "../types.js";
import { METRIC_COLUMNS, type MetricRow, sampleOf } from "../metric-columns.js";

export class PostgresDeploymentMetricStore implements DeploymentMetricStore {
  constructor(private readonly pool: pg.Pool) {}

  async append(samples: MetricSample[]): Promise<void> {
    if (samples.length === 0) return;
    await this.pool.query(
      `INSERT INTO deployment_metrics (${METRIC_COLUMNS})
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::float8[], $5::float8[], $6::bigint[],
         $7::integer[], $8::integer[], $9::jsonb[])`,
      [
        samples.map((sample) => sample.deployment_id),
        samples.map((sample) => sample.replica),
        samples.map((sample) => sample.timestamp),
        samples.map((sample) => sample.interval_seconds),
        samples.map((sample) => sample.cpu_seconds),
        samples.map((sample) => sample.memory_bytes),
        samples.map((sample) => sample.pending_runs),
        samples.map((sample) => sample.running_runs),
        samples.map((sample) => jsonbOrNull(sample.runs)),
      ],
    );
  }

  async since(deploymentId: string, from: string): Promise<MetricSample[]> {
    const { rows } = await this.pool.query<MetricRow>(
      `SELECT ${METRIC_COLUMNS} FROM deployment_metrics WHERE deployment_id = $1 AND timestamp >= $2 ORDER BY timestamp, id`,
      [deploymentId, from],
    );
    return rows.map(sampleOf);
  }

  async prune(before: string): Promise<number> {
    return (await this.pool.query("DELETE FROM deployment_metrics WHERE timestamp < $1", [before])).rowCount ?? 0;
  }
}
