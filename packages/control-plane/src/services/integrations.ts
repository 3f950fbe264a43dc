import { NotFoundError } from "@berth/service-kit";
import type { ControlPlaneStorage } from "../storage/types.js";

/** Git-host integrations, configured by an administrator (`berth control-plane integrations add`). */
export class IntegrationService {
  constructor(private readonly storage: ControlPlaneStorage) {}

  async list(tenantId: string) {
    const integrations = await this.storage.integrations.list(tenantId);
    return integrations.map(({ repos: _repos, tenant_id: _tenant, ...integration }) => integration);
  }

  async repos(tenantId: string, id: string) {
    const integration = await this.storage.integrations.get(tenantId, id);
    if (!integration) throw new NotFoundError(`Integration ${id} not found`);
    return integration.repos.map((repo) => ({ host_integration_id: integration.id, ...repo }));
  }
}
