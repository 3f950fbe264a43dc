import { ConflictError, type SqliteDatabase } from "@berth/service-kit";
import { LISTENER } from "../columns.js";
import type { ListenerRecord, ListenerStore } from "../types.js";
import { listenerFromRow } from "./rows.js";

type Row = Record<string, unknown>;

export class SqliteListenerStore implements ListenerStore {
  constructor(private readonly db: SqliteDatabase) {}

  async create(listener: ListenerRecord): Promise<void> {
    this.db.transaction(() => this.insert(listener)).immediate();
  }

  private insert(listener: ListenerRecord): void {
    if (listener.default) this.unmarkDefault(listener.tenant_id);
    const taken = this.db
      .prepare("SELECT 1 FROM listeners WHERE tenant_id = ? AND compute_id = ?")
      .get(listener.tenant_id, listener.compute_id);
    if (taken) throw new ConflictError(`A listener with compute_id "${listener.compute_id}" already exists`);
    this.db
      .prepare(
        `INSERT INTO listeners (id, tenant_id, compute_type, compute_id, compute_config, version, is_default, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        listener.id,
        listener.tenant_id,
        listener.compute_type,
        listener.compute_id,
        JSON.stringify(listener.compute_config),
        listener.version,
        listener.default ? 1 : 0,
        listener.created_at,
        listener.updated_at,
      );
  }

  async get(tenantId: string, id: string): Promise<ListenerRecord | undefined> {
    const row = this.db.prepare(`SELECT ${LISTENER} FROM listeners WHERE tenant_id = ? AND id = ?`).get(tenantId, id) as
      | Row
      | undefined;
    return row && listenerFromRow(row);
  }

  async list(tenantId: string, limit: number, offset: number): Promise<ListenerRecord[]> {
    const rows = this.db
      .prepare(`SELECT ${LISTENER} FROM listeners WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(tenantId, limit, offset) as Row[];
    return rows.map(listenerFromRow);
  }

  async update(
    tenantId: string,
    id: string,
    change: Pick<ListenerRecord, "compute_config" | "version" | "default" | "updated_at">,
  ): Promise<ListenerRecord | undefined> {
    return this.db
      .transaction(() => {
        if (change.default) this.unmarkDefault(tenantId);
        const row = this.db
          .prepare(
            `UPDATE listeners SET compute_config = ?, version = ?, is_default = ?, updated_at = ? WHERE tenant_id = ? AND id = ?
             RETURNING ${LISTENER}`,
          )
          .get(JSON.stringify(change.compute_config), change.version, change.default ? 1 : 0, change.updated_at, tenantId, id) as
          | Row
          | undefined;
        return row && listenerFromRow(row);
      })
      .immediate();
  }

  async defaultOf(tenantId: string): Promise<ListenerRecord | undefined> {
    const row = this.db.prepare(`SELECT ${LISTENER} FROM listeners WHERE tenant_id = ? AND is_default = 1`).get(tenantId) as
      | Row
      | undefined;
    return row && listenerFromRow(row);
  }

  private unmarkDefault(tenantId: string): void {
    this.db.prepare("UPDATE listeners SET is_default = 0 WHERE tenant_id = ? AND is_default = 1").run(tenantId);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        const exists = this.db.prepare("SELECT 1 FROM listeners WHERE tenant_id = ? AND id = ?").get(tenantId, id);
        if (!exists) return false;
        const used = this.db.prepare("SELECT 1 FROM deployments WHERE listener_id = ? AND deleted_at IS NULL LIMIT 1").get(id);
        if (used) throw new ConflictError(`Listener ${id} is used by a deployment; delete its deployments first`);
        // Deleted deployments keep their rows (AWAITING_DELETE) but let go of the listener.
        this.db.prepare("UPDATE deployments SET listener_id = NULL WHERE listener_id = ?").run(id);
        this.db.prepare("DELETE FROM listeners WHERE id = ?").run(id);
        return true;
      })
      .immediate();
  }
}
