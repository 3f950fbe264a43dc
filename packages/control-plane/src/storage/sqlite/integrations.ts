import type { SqliteDatabase } from "@berth/service-kit";
import { INTEGRATION } from "../columns.js";
import type { IntegrationRecord, IntegrationStore } from "../types.js";
import { integrationFromRow } from "./rows.js";

type Row = Record<string, unknown>;

export class SqliteIntegrationStore implements IntegrationStore {
  constructor(private readonly db: SqliteDatabase) {}

  async create(integration: IntegrationRecord): Promise<void> {
    this.db
      .prepare(
        "INSERT INTO integrations (id, tenant_id, name, provider, installation_id, repos, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        integration.id,
        integration.tenant_id,
        integration.name,
        integration.provider,
        integration.installation_id,
        JSON.stringify(integration.repos),
        integration.created_at,
      );
  }

  async get(tenantId: string, id: string): Promise<IntegrationRecord | undefined> {
    const row = this.db.prepare(`SELECT ${INTEGRATION} FROM integrations WHERE tenant_id = ? AND id = ?`).get(tenantId, id) as
      | Row
      | undefined;
    return row && integrationFromRow(row);
  }

  async list(tenantId: string): Promise<IntegrationRecord[]> {
    const rows = this.db
      .prepare(`SELECT ${INTEGRATION} FROM integrations WHERE tenant_id = ? ORDER BY created_at, id`)
      .all(tenantId) as Row[];
    return rows.map(integrationFromRow);
  }
}
