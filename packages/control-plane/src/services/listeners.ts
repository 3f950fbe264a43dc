import { BadRequestError, NotFoundError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import type { ListenerCreateInput, ListenerPatchInput } from "../domain/inputs/listener.js";
import type { ControlPlaneStorage, ListenerRecord } from "../storage/types.js";
import type { ChangeFeed } from "./change-feed.js";

const notFound = (id: string) => new NotFoundError(`Listener ${id} not found`);

function checkComputeConfig(computeType: string, config: { cluster_namespaces?: string[] | null } | null | undefined) {
  if (config?.cluster_namespaces && computeType !== "cluster") {
    throw new BadRequestError(`compute_config.cluster_namespaces only applies to compute type cluster, not ${computeType}`);
  }
  return { cluster_namespaces: config?.cluster_namespaces ?? null };
}

export class ListenerService {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly changes: ChangeFeed,
  ) {}

  async create(tenantId: string, body: ListenerCreateInput): Promise<ListenerRecord> {
    const now = new Date().toISOString();
    const listener: ListenerRecord = {
      id: randomUUID(),
      tenant_id: tenantId,
      compute_type: body.compute_type,
      compute_id: body.compute_id,
      compute_config: checkComputeConfig(body.compute_type, body.compute_config),
      version: body.version ?? null,
      default: body.default ?? false,
      created_at: now,
      updated_at: now,
    };
    await this.storage.listeners.create(listener);
    return listener;
  }

  async get(tenantId: string, id: string): Promise<ListenerRecord> {
    const listener = await this.storage.listeners.get(tenantId, id);
    if (!listener) throw notFound(id);
    return listener;
  }

  async list(tenantId: string, limit: number, offset: number): Promise<{ resources: ListenerRecord[]; offset: number }> {
    const resources = await this.storage.listeners.list(tenantId, limit, offset);
    return { resources, offset: offset + resources.length };
  }

  async patch(tenantId: string, id: string, body: ListenerPatchInput): Promise<ListenerRecord> {
    const current = await this.get(tenantId, id);
    for (const field of ["compute_type", "compute_id"] as const) {
      if (body[field] !== undefined && body[field] !== null && body[field] !== current[field]) {
        throw new BadRequestError(`${field} is immutable`);
      }
    }
    const updated = await this.storage.listeners.update(tenantId, id, {
      compute_config: body.compute_config
        ? checkComputeConfig(current.compute_type, body.compute_config)
        : current.compute_config,
      version: body.version === undefined ? current.version : body.version,
      default: body.default ?? current.default,
      updated_at: new Date().toISOString(),
    });
    if (!updated) throw notFound(id);
    return updated;
  }

  async delete(tenantId: string, id: string): Promise<void> {
    if (!(await this.storage.listeners.delete(tenantId, id))) throw notFound(id);
    // Its deleted deployments are the embedded listener's now, to remove.
    this.changes.publish("deployment", { change: "listener_deleted", listener_id: id });
  }
}
