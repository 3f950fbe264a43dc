import { jsonb } from "@berth/service-kit";
import type pg from "pg";
import type { IntegrationRecord, IntegrationStore } from "../types.js";
import { INTEGRATION } from "../columns.js";

export class PostgresIntegrationStore implements IntegrationStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(integration: IntegrationRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO integrations (id, tenant_id, name, provider, installation_id, repos, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
      [
        integration.id,
        integration.tenant_id,
        integration.name,
        integration.provider,
        integration.installation_id,
        jsonb(integration.repos),
        integration.created_at,
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

  async list(tenantId: string): Promise<IntegrationRecord[]> {
    const { rows } = await this.pool.query<IntegrationRecord>(
      `SELECT ${INTEGRATION} FROM integrations WHERE tenant_id = $1 ORDER BY created_at, id`,
      [tenantId],
    );
    return rows;
  }
}
