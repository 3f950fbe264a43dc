import type { SqliteDatabase } from "@berth/service-kit";
import { TRACING_PROJECT } from "../columns.js";
import type { TracingProjectRecord, TracingProjectStore } from "../types.js";

export class SqliteTracingProjectStore implements TracingProjectStore {
  constructor(private readonly db: SqliteDatabase) {}

  async getByName(tenantId: string, name: string): Promise<TracingProjectRecord | undefined> {
    return this.db
      .prepare(`SELECT ${TRACING_PROJECT} FROM tracing_projects WHERE tenant_id = ? AND name = ?`)
      .get(tenantId, name) as TracingProjectRecord | undefined;
  }
}
