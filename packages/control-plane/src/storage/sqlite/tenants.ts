import type { SqliteDatabase } from "@berth/service-kit";
import { TENANT } from "../columns.js";
import type { TenantRecord, TenantStore } from "../types.js";

export class SqliteTenantStore implements TenantStore {
  constructor(private readonly db: SqliteDatabase) {}

  async create(tenant: TenantRecord): Promise<void> {
    this.db.prepare("INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)").run(tenant.id, tenant.name, tenant.created_at);
  }

  async get(id: string): Promise<TenantRecord | undefined> {
    return this.db.prepare(`SELECT ${TENANT} FROM tenants WHERE id = ?`).get(id) as TenantRecord | undefined;
  }

  async list(): Promise<TenantRecord[]> {
    return this.db.prepare(`SELECT ${TENANT} FROM tenants ORDER BY created_at, id`).all() as TenantRecord[];
  }
}
