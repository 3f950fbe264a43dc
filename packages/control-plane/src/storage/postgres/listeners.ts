import { ConflictError, isUniqueViolation, withTransaction, jsonb, type Queryable } from "@berth/service-kit";
import type pg from "pg";
import type { ListenerRecord, ListenerStore } from "../types.js";
import { LISTENER } from "../columns.js";

export class PostgresListenerStore implements ListenerStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(listener: ListenerRecord): Promise<void> {
    try {
      await withTransaction(this.pool, async (client) => {
        if (listener.default) await unmarkDefault(client, listener.tenant_id);
        await client.query(
          `INSERT INTO listeners (id, tenant_id, compute_type, compute_id, compute_config, version, is_default, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9)`,
          [
            listener.id,
            listener.tenant_id,
            listener.compute_type,
            listener.compute_id,
            jsonb(listener.compute_config),
            listener.version,
            listener.default,
            listener.created_at,
            listener.updated_at,
          ],
        );
      });
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
    change: Pick<ListenerRecord, "compute_config" | "version" | "default" | "updated_at">,
  ): Promise<ListenerRecord | undefined> {
    return withTransaction(this.pool, async (client) => {
      // As SQLite: the previous default is unmarked even when `id` turns out not to exist.
      if (change.default) await unmarkDefault(client, tenantId);
      const { rows } = await client.query<ListenerRecord>(
        `UPDATE listeners SET compute_config = $1::jsonb, version = $2, is_default = $3, updated_at = $4 WHERE tenant_id = $5 AND id = $6
         RETURNING ${LISTENER}`,
        [jsonb(change.compute_config), change.version, change.default, change.updated_at, tenantId, id],
      );
      return rows[0];
    });
  }

  async defaultOf(tenantId: string): Promise<ListenerRecord | undefined> {
    const { rows } = await this.pool.query<ListenerRecord>(
      `SELECT ${LISTENER} FROM listeners WHERE tenant_id = $1 AND is_default`,
      [tenantId],
    );
    return rows[0];
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      // The lock waits for deployments being created on this listener (their
      // foreign key check holds a share lock on it) and holds off new ones.
      const { rowCount } = await client.query("SELECT 1 FROM listeners WHERE tenant_id = $1 AND id = $2 FOR UPDATE", [
        tenantId,
        id,
      ]);
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

/**
 * Unmarks the workspace's default listener, first taking a per-workspace lock
 * (until the transaction ends) so that concurrent new defaults take turns: the
 * last one wins, and listeners_tenant_default never fires.
 */
async function unmarkDefault(client: Queryable, tenantId: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext('berth.listener_default:' || current_schema() || ':' || $1))", [
    tenantId,
  ]);
  await client.query("UPDATE listeners SET is_default = false WHERE tenant_id = $1 AND is_default", [tenantId]);
}
