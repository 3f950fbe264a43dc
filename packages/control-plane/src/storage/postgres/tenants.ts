import type pg from "pg";
import type { TenantRecord, TenantStore } from "../types.js";
import { TENANT } from "../columns.js";

export class PostgresTenantStore implements TenantStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(tenant: TenantRecord): Promise<void> {
    await this.pool.query("INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, $3)", [
      tenant.id,
      tenant.name,
      tenant.created_at,
    ]);
  }

  async get(id: string): Promise<TenantRecord | undefined> {
    const { rows } = await this.pool.query<TenantRecord>(`SELECT ${TENANT} FROM tenants WHERE id = $1`, [id]);
    return rows[0];
  }

  async list(): Promise<TenantRecord[]> {
    const { rows } = await this.pool.query<TenantRecord>(`SELECT ${TENANT} FROM tenants ORDER BY created_at, id`);
    return rows;
  }
}
