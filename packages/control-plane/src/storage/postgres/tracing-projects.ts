import type pg from "pg";
import type { TracingProjectRecord, TracingProjectStore } from "../types.js";
import { TRACING_PROJECT } from "../columns.js";

export class PostgresTracingProjectStore implements TracingProjectStore {
  constructor(private readonly pool: pg.Pool) {}

  async getByName(tenantId: string, name: string): Promise<TracingProjectRecord | undefined> {
    const { rows } = await this.pool.query<TracingProjectRecord>(
      `SELECT ${TRACING_PROJECT} FROM tracing_projects WHERE tenant_id = $1 AND name = $2`,
      [tenantId, name],
    );
    return rows[0];
  }
}
