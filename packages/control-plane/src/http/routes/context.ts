import type { RouteCatalog } from "@berth/service-kit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Caller } from "../../api-keys/authenticate.js";

export interface RouteContext {
  app: FastifyInstance;
  catalog: RouteCatalog;
  /** Authenticates the request (401/403 otherwise) and names its workspace. */
  caller(request: FastifyRequest): Promise<Caller>;
}

/** The routes that need credentials, as OpenAPI security requirements. */
export const SECURED = [
  { ApiKey: [], TenantId: [] },
  { BearerAuth: [], TenantId: [] },
];
