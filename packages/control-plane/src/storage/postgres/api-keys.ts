import { jsonb } from "@berth/service-kit";
import type pg from "pg";
import type { ApiKeyRecord, ApiKeyStore } from "../types.js";
import { API_KEY } from "../columns.js";

export class PostgresApiKeyStore implements ApiKeyStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(key: ApiKeyRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO api_keys (id, name, prefix, key_hash, all_tenants, tenant_ids, created_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8) ON CONFLICT (key_hash) DO NOTHING`,
      [key.id, key.name, key.prefix, key.key_hash, key.all_tenants, jsonb(key.tenant_ids), key.created_at, key.revoked_at],
    );
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.pool.query<ApiKeyRecord>(`SELECT ${API_KEY} FROM api_keys WHERE key_hash = $1`, [hash]);
    return rows[0];
  }

  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<ApiKeyRecord>(`SELECT ${API_KEY} FROM api_keys ORDER BY created_at, id`);
    return rows;
  }

  async revoke(id: string, now: string): Promise<ApiKeyRecord | undefined> {
    // A revoked key keeps its first revoked_at.
    const { rows } = await this.pool.query<ApiKeyRecord>(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING ${API_KEY}`,
      [id, now],
    );
    return rows[0];
  }
}
