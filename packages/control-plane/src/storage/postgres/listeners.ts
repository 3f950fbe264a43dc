import { ConflictError, isUniqueViolation, withTransaction, jsonb } from "@berth/service-kit";
import type pg from "pg";
import type { ListenerRecord, ListenerStore } from "../types.js";
import { LISTENER } from "./rows.js";

export class PostgresListenerStore implements ListenerStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(listener: ListenerRecord): Promise<void> {
    try {
      await this.pool.query(
        `INSERT INTO listeners (id, tenant_id, compute_type, compute_id, compute_config, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)`,
        [
          listener.id,
          listener.tenant_id,
          listener.compute_type,
          listener.compute_id,
          jsonb(listener.compute_config),
          listener.version,
          listener.created_at,
          listener.updated_at,
        ],
      );
    } catch (err) {
      if (isUniqueViolation(err, "listeners_tenant_compute_id")) {
        throw new ConflictError(`A listener with compute_id "${listener.compute_id}" already exists`);
      }
      throw err;
    }
  }

  async get(tenantId: string, id: string): Promise<ListenerRecord | undefined> {
    const { rows } = await this.pool.query<ListenerRecord>(`SELECT ${LISTENER} FROM listeners WHERE tenant_id = $1 AND id = $2`, [
      tenantId,
      id,
    ]);
    return rows[0];
  }

  async list(tenantId: string, limit: number, offset: number): Promise<ListenerRecord[]> {
    const { rows } = await this.pool.query<ListenerRecord>(
      `SELECT ${LISTENER} FROM listeners WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [tenantId, limit, offset],
    );
    return rows;
  }

  async update(
    tenantId: string,
    id: string,
    change: Pick<ListenerRecord, "compute_config" | "version" | "updated_at">,
  ): Promise<ListenerRecord | undefined> {
    const { rows } = await this.pool.query<ListenerRecord>(
      `UPDATE listeners SET compute_config = $1::jsonb, version = $2, updated_at = $3 WHERE tenant_id = $4 AND id = $5
       RETURNING ${LISTENER}`,
      [jsonb(change.compute_config), change.version, change.updated_at, tenantId, id],
    );
    return rows[0];
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      // The lock waits for deployments being created on this listener (their
      // foreign key check holds a share lock on it) and holds off new ones.
      const { rowCount } = await client.query("SELECT 1 FROM listeners WHERE tenant_id = $1 AND id = $2 FOR UPDATE", [tenantId, id]);
      if (!rowCount) return false;
      const used = await client.query("SELECT 1 FROM deployments WHERE listener_id = $1 AND deleted_at IS NULL LIMIT 1", [id]);
      if (used.rowCount) throw new ConflictError(`Listener ${id} is used by a deployment; delete its deployments first`);
      // Deleted deployments keep their rows (AWAITING_DELETE) but let go of the listener.
      await client.query("UPDATE deployments SET listener_id = NULL WHERE listener_id = $1", [id]);
      await client.query("DELETE FROM listeners WHERE id = $1", [id]);
      return true;
    });
  }
}
