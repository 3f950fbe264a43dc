import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
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
 * admin key valid for all workspaces, shown once (`createdKey`) and kept in
 * `keyFile` (mode 0600, like a kubeconfig) for local tools. A configured
 * admin key is registered on every start instead.
 */
export async function bootstrap(
  storage: ControlPlaneStorage,
  settings: BootstrapSettings,
  keyFile: string,
  logger: Logger,
): Promise<{ tenantId: string; createdKey?: string }> {
  let tenants = await storage.tenants.list();
  if (tenants.length === 0) {
    const tenant = { id: settings.defaultTenantId ?? randomUUID(), name: "default", created_at: new Date().toISOString() };
    await storage.tenants.create(tenant);
    logger.info({ tenant_id: tenant.id }, "created the default workspace");
    tenants = [tenant];
    if (!settings.adminApiKey) {
      const key = generateApiKey();
      await storage.apiKeys.create(apiKeyRecord(key, { name: "admin", allTenants: true, tenantIds: [] }));
      // A new file, so that `mode` applies (it does not to an existing one, left by an older data directory).
      rmSync(keyFile, { force: true });
      writeFileSync(keyFile, `${key}\n`, { mode: 0o600, flag: "wx" });
      return { tenantId: tenant.id, createdKey: key };
    }
  }
  if (settings.adminApiKey) {
    await storage.apiKeys.create(
      apiKeyRecord(settings.adminApiKey, { name: "admin (BERTH_ADMIN_API_KEY)", allTenants: true, tenantIds: [] }),
    );
  }
  return { tenantId: tenants[0]!.id };
}
