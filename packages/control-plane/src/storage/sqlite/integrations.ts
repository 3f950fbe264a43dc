import type { SqliteDatabase } from "@berth/service-kit";
import { INTEGRATION, INTEGRATION_CHANGEABLE as CHANGEABLE } from "../columns.js";
import type { IntegrationChange, IntegrationRecord, IntegrationStore } from "../types.js";
import { integrationFromRow } from "./rows.js";

type Row = Record<string, unknown>;

export class SqliteIntegrationStore implements IntegrationStore {
  constructor(private readonly db: SqliteDatabase) {}

  async create(integration: IntegrationRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO integrations (id, tenant_id, name, provider, installation_id, repos, created_at, kind, base_url,
           credentials_ciphertext, webhook_secret_ciphertext) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        integration.id,
        integration.tenant_id,
        integration.name,
        integration.provider,
        integration.installation_id,
        JSON.stringify(integration.repos),
        integration.created_at,
        integration.kind,
        integration.base_url,
        integration.credentials_ciphertext,
        integration.webhook_secret_ciphertext,
      );
  }

  async get(tenantId: string, id: string): Promise<IntegrationRecord | undefined> {
    const row = this.db.prepare(`SELECT ${INTEGRATION} FROM integrations WHERE tenant_id = ? AND id = ?`).get(tenantId, id) as
      | Row
      | undefined;
    return row && integrationFromRow(row);
  }

  async getAny(id: string): Promise<IntegrationRecord | undefined> {
    const row = this.db.prepare(`SELECT ${INTEGRATION} FROM integrations WHERE id = ?`).get(id) as Row | undefined;
    return row && integrationFromRow(row);
  }

  async list(tenantId: string): Promise<IntegrationRecord[]> {
    const rows = this.db
      .prepare(`SELECT ${INTEGRATION} FROM integrations WHERE tenant_id = ? ORDER BY created_at, id`)
      .all(tenantId) as Row[];
    return rows.map(integrationFromRow);
  }

  async update(tenantId: string, id: string, change: IntegrationChange): Promise<IntegrationRecord | undefined> {
    const fields = CHANGEABLE.flatMap((name) => (change[name] === undefined ? [] : [[name, change[name]] as const]));
    if (fields.length === 0) return this.get(tenantId, id);
    const values = fields.map(([name, value]) => (name === "repos" ? JSON.stringify(value) : value));
    const row = this.db
      .prepare(
        `UPDATE integrations SET ${fields.map(([name]) => `${name} = ?`).join(", ")}
         WHERE tenant_id = ? AND id = ? RETURNING ${INTEGRATION}`,
      )
      .get(...(values as (string | null)[]), tenantId, id) as Row | undefined;
    return row && integrationFromRow(row);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    return this.db.prepare("DELETE FROM integrations WHERE tenant_id = ? AND id = ?").run(tenantId, id).changes > 0;
  }

  async recordDelivery(integrationId: string, deliveryId: string, at: string): Promise<boolean> {
    const result = this.db
      .prepare(
        "INSERT INTO webhook_deliveries (integration_id, delivery_id, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      )
      .run(integrationId, deliveryId, at);
    return result.changes > 0;
  }
}
