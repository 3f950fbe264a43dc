import type { IncomingHttpHeaders } from "node:http";
import type { JsonObject } from "../storage/types.js";
import type { RequestUser } from "./auth/request-user.js";

/** Credentials never reach graph code, even though they are `x-` headers. */
const WITHHELD_HEADERS = new Set(["x-api-key", "x-tenant-id", "x-service-key"]);

/**
 * The run config with the request's `x-*` headers (credentials withheld),
 * `user-agent` and the authenticated user (`langgraph_auth_user`,
 * `langgraph_auth_user_id`, `langgraph_auth_permissions`) in `configurable`, as the reference server does, so graph code
 * can read them and LangGraph copies them into the run's metadata. A header
 * overrides a `configurable` key of the same name.
 */
export function withRequestHeaders<T extends { config?: JsonObject | null }>(
  body: T,
  headers: IncomingHttpHeaders,
  user?: RequestUser,
): T {
  const forwarded: JsonObject = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    if ((key.startsWith("x-") && !WITHHELD_HEADERS.has(key)) || key === "user-agent") {
      forwarded[key] = Array.isArray(value) ? value.join(", ") : value;
    }
  }
  // The authenticated user, as the reference server gives it to graphs; what the client sent under these names never counts.
  if (user) {
    forwarded.langgraph_auth_user = user as JsonObject;
    forwarded.langgraph_auth_user_id = user.identity;
    forwarded.langgraph_auth_permissions = user.permissions;
  }
  if (Object.keys(forwarded).length === 0) return body;
  const config = body.config ?? {};
  const configurable = (config.configurable as JsonObject | undefined) ?? {};
  return { ...body, config: { ...config, configurable: { ...configurable, ...forwarded } } };
}
