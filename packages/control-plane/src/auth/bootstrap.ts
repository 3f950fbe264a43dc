import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { ControlPlaneStorage } from "../storage/types.js";
import { apiKeyRecord, generateApiKey } from "./api-keys.js";

export interface BootstrapSettings {
  /** `BERTH_ADMIN_API_KEY`: registered (for all workspaces) at every start. */
  adminApiKey?: string;
  /** `BERTH_DEFAULT_TENANT_ID`: the id of the first workspace. */
  defaultTenantId?: string;
}

/**
 * First start (no workspace yet): creates the workspace `default` and an
 * admin key valid for all workspaces, and prints them once. A configured
 * admin key is registered on every start, so it survives a new database.
 */
export async function bootstrap(storage: ControlPlaneStorage, settings: BootstrapSettings, logger: Logger): Promise<void> {
  const first = (await storage.tenants.list()).length === 0;
  if (first) {
    const tenant = { id: settings.defaultTenantId ?? randomUUID(), name: "default", created_at: new Date().toISOString() };
    await storage.tenants.create(tenant);
    logger.info({ tenant_id: tenant.id }, "created the default workspace");
    if (!settings.adminApiKey) {
      const key = generateApiKey();
      await storage.apiKeys.create(apiKeyRecord(key, { name: "admin", allTenants: true, tenantIds: [] }));
      process.stdout.write(
        `\nBerth control plane: first start.\n  workspace (X-Tenant-Id): ${tenant.id}\n  admin API key (X-Api-Key): ${key}\n` +
          "  The key is shown only now; keep it. More keys: berth control-plane keys create --help\n\n",
      );
    }
  }
  if (settings.adminApiKey) {
    await storage.apiKeys.create(apiKeyRecord(settings.adminApiKey, { name: "admin (BERTH_ADMIN_API_KEY)", allTenants: true, tenantIds: [] }));
  }
}
