import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { ApiKeyRecord } from "../storage/types.js";

/** Keys look like `berth_<43 base64url characters>` (256 random bits). */
export const generateApiKey = () => `berth_${randomBytes(32).toString("base64url")}`;

export const hashApiKey = (key: string) => createHash("sha256").update(key).digest("hex");

/** The stored form of a key: its hash and a short prefix to recognise it by, never the key. */
export function apiKeyRecord(key: string, scope: { name: string; allTenants: boolean; tenantIds: string[] }): ApiKeyRecord {
  return {
    id: randomUUID(),
    name: scope.name,
    prefix: key.slice(0, 12),
    key_hash: hashApiKey(key),
    all_tenants: scope.allTenants,
    tenant_ids: scope.tenantIds,
    created_at: new Date().toISOString(),
    revoked_at: null,
  };
}

/** A listing entry: everything but the hash. */
export const describeApiKey = ({ key_hash: _hash, ...key }: ApiKeyRecord) => key;

/** Keys minted for a deployment to send its traces with: valid on the tracing API (/api/v1) only. */
export const TRACING_KEY_NAME_PREFIX = "tracing:";

export const isTracingOnly = (key: Pick<ApiKeyRecord, "name">) => key.name.startsWith(TRACING_KEY_NAME_PREFIX);

/** Keys minted for a deployment's graphs to ask the Auth Service for tokens: valid on its token routes only. */
export const AUTH_SERVICE_KEY_NAME_PREFIX = "auth-service:";

export const isAuthServiceOnly = (key: Pick<ApiKeyRecord, "name">) => key.name.startsWith(AUTH_SERVICE_KEY_NAME_PREFIX);

/** The deployment a tracing or Auth Service key was minted for (its name ends with the deployment's id); null for other keys. */
export function deploymentOfKey(key: Pick<ApiKeyRecord, "name">): string | null {
  if (isTracingOnly(key)) return key.name.slice(TRACING_KEY_NAME_PREFIX.length);
  if (isAuthServiceOnly(key)) return key.name.slice(AUTH_SERVICE_KEY_NAME_PREFIX.length);
  return null;
}
