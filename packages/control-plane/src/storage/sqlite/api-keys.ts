import type { SqliteDatabase } from "@berth/service-kit";
import { API_KEY } from "../columns.js";
import type { ApiKeyRecord, ApiKeyStore } from "../types.js";
import { apiKeyFromRow } from "./rows.js";

type Row = Record<string, unknown>;

export class SqliteApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: SqliteDatabase) {}

  async create(key: ApiKeyRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO api_keys (id, name, prefix, key_hash, all_tenants, tenant_ids, created_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING`,
      )
      .run(
        key.id,
        key.name,
        key.prefix,
        key.key_hash,
        key.all_tenants ? 1 : 0,
        JSON.stringify(key.tenant_ids),
        key.created_at,
        key.revoked_at,
      );
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.db.prepare(`SELECT ${API_KEY} FROM api_keys WHERE key_hash = ?`).get(hash) as Row | undefined;
    return row && apiKeyFromRow(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return (this.db.prepare(`SELECT ${API_KEY} FROM api_keys ORDER BY created_at, id`).all() as Row[]).map(apiKeyFromRow);
  }

  async revoke(id: string, now: string): Promise<ApiKeyRecord | undefined> {
    this.db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(now, id);
    const row = this.db.prepare(`SELECT ${API_KEY} FROM api_keys WHERE id = ?`).get(id) as Row | undefined;
    return row && apiKeyFromRow(row);
  }
}
