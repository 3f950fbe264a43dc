import { ForbiddenError, UnauthorizedError } from "@berth/service-kit";
import type { FastifyRequest } from "fastify";
import type { ControlPlaneStorage } from "../storage/types.js";
import { deploymentOfKey, hashApiKey, isAuthServiceOnly, isTracingOnly } from "./api-keys.js";

/** Who is calling: the workspace the request acts in. */
export interface Caller {
  tenantId: string;
  apiKeyId: string;
  /** A deployment's tracing key: it may only send traces (the tracing API). */
  tracingOnly: boolean;
  /** A deployment's Auth Service key: it may only ask for its runs' users' tokens (docs/auth-service.md). */
  authServiceOnly: boolean;
  /** An admin key (valid for every workspace). */
  allTenants: boolean;
  /** The deployment a tracing or Auth Service key belongs to (what it is scoped to); null for other keys. */
  deploymentId: string | null;
}

export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers["x-api-key"];
  const apiKey = Array.isArray(header) ? header[0] : header;
  if (apiKey) return apiKey.trim();
  const authorization = request.headers.authorization;
  const bearer = authorization && /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return bearer ? bearer[1]!.trim() : undefined;
}

/**
 * Resolves the API key (X-Api-Key, or Authorization: Bearer) and the workspace
 * (X-Tenant-Id, needed when the key reaches several): 401 for a missing or
 * unknown key, 403 for a revoked key or a workspace the key cannot act in.
 */
export async function authenticate(storage: ControlPlaneStorage, request: FastifyRequest): Promise<Caller> {
  const key = presentedKey(request);
  if (!key) throw new UnauthorizedError("Missing API key: send X-Api-Key (or Authorization: Bearer <key>)");
  const record = await storage.apiKeys.findByHash(hashApiKey(key));
  if (!record) throw new UnauthorizedError("Invalid API key");
  if (record.revoked_at) throw new ForbiddenError("API key has been revoked");
  // A deployment's Auth Service key reaches users' tokens: it dies with its deployment.
  if (isAuthServiceOnly(record)) {
    const deployment = await storage.deployments.getAny(deploymentOfKey(record)!);
    if (!deployment || deployment.deleted_at) throw new ForbiddenError("API key of a deleted deployment");
  }
  const scope = {
    tracingOnly: isTracingOnly(record),
    authServiceOnly: isAuthServiceOnly(record),
    allTenants: record.all_tenants,
    deploymentId: deploymentOfKey(record),
  };

  const header = request.headers["x-tenant-id"];
  const requested = (Array.isArray(header) ? header[0] : header)?.trim();
  const reachable = record.all_tenants ? (await storage.tenants.list()).map((tenant) => tenant.id) : record.tenant_ids;
  if (requested) {
    if (!reachable.includes(requested)) throw new ForbiddenError(`API key has no access to workspace ${requested}`);
    return { tenantId: requested, apiKeyId: record.id, ...scope };
  }
  if (reachable.length === 1) return { tenantId: reachable[0]!, apiKeyId: record.id, ...scope };
  if (reachable.length === 0) throw new ForbiddenError("API key has no access to any workspace");
  throw new ForbiddenError(
    `This API key is valid for several workspaces and requires workspace specification: send X-Tenant-Id (${choices(await storage.tenants.list(), reachable)})`,
  );
}

const LISTED_WORKSPACES = 20;

/** The workspaces a key may choose from, so that a client can say which exist: only ones the key reaches anyway. */
function choices(workspaces: { id: string; name: string }[], reachable: string[]): string {
  const listed = workspaces.filter((tenant) => reachable.includes(tenant.id));
  const shown = listed.slice(0, LISTED_WORKSPACES).map((tenant) => `${tenant.id} "${tenant.name}"`);
  const more = listed.length > LISTED_WORKSPACES ? `, and ${listed.length - LISTED_WORKSPACES} more` : "";
  return `one of: ${shown.join(", ")}${more}`;
}
