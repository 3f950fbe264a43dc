import { jsonb } from "@berth/service-kit";
import type pg from "pg";
import { INTEGRATION, INTEGRATION_CHANGEABLE as CHANGEABLE } from "../columns.js";
import type { IntegrationChange, IntegrationRecord, IntegrationStore } from "../types.js";

export class PostgresIntegrationStore implements IntegrationStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(integration: IntegrationRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO integrations (id, tenant_id, name, provider, installation_id, repos, created_at, kind, base_url,
         credentials_ciphertext, webhook_secret_ciphertext)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11)`,
      [
        integration.id,
        integration.tenant_id,
        integration.name,
        integration.provider,
        integration.installation_id,
        jsonb(integration.repos),
        integration.created_at,
        integration.kind,
        integration.base_url,
        integration.credentials_ciphertext,
        integration.webhook_secret_ciphertext,
      ],
    );
  }

  async get(tenantId: string, id: string): Promise<IntegrationRecord | undefined> {
    const { rows } = await this.pool.query<IntegrationRecord>(
      `SELECT ${INTEGRATION} FROM integrations WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return rows[0];
  }

  async getAny(id: string): Promise<IntegrationRecord | undefined> {
    const { rows } = await this.pool.query<IntegrationRecord>(`SELECT ${INTEGRATION} FROM integrations WHERE id = $1`, [id]);
    return rows[0];
  }

  async list(tenantId: string): Promise<IntegrationRecord[]> {
    const { rows } = await this.pool.query<IntegrationRecord>(
      `SELECT ${INTEGRATION} FROM integrations WHERE tenant_id = $1 ORDER BY created_at, id`,
      [tenantId],
    );
    return rows;
  }

  async update(tenantId: string, id: string, change: IntegrationChange): Promise<IntegrationRecord | undefined> {
    const fields = CHANGEABLE.filter((name) => change[name] !== undefined);
    if (fields.length === 0) return this.get(tenantId, id);
    const values = fields.map((name) => (name === "repos" ? jsonb(change.repos) : change[name]));
    const { rows } = await this.pool.query<IntegrationRecord>(
      `UPDATE integrations SET ${fields.map((name, i) => `${name} = $${i + 3}${name === "repos" ? "::jsonb" : ""}`).join(", ")}
       WHERE tenant_id = $1 AND id = $2 RETURNING ${INTEGRATION}`,
      [tenantId, id, ...values],
    );
    return rows[0];
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM integrations WHERE tenant_id = $1 AND id = $2", [tenantId, id]);
    return (rowCount ?? 0) > 0;
  }

  async recordDelivery(integrationId: string, deliveryId: string, at: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "INSERT INTO webhook_deliveries (integration_id, delivery_id, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
      [integrationId, deliveryId, at],
    );
    return (rowCount ?? 0) > 0;
  }
}
