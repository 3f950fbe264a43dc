import type { IncomingHttpHeaders } from "node:http";
import type { HeaderPatterns } from "../config/http-config.js";
import type { JsonObject } from "../storage/types.js";
import type { RequestUser } from "./auth/request-user.js";
import { type HeaderSelector, headerSelector, selectHeaders } from "./header-patterns.js";

/** Credentials never reach graph code by default, even though they are `x-` headers. */
const WITHHELD_HEADERS = new Set(["x-api-key", "x-tenant-id", "x-service-key"]);

const forwardedByDefault: HeaderSelector = (name) =>
  (name.startsWith("x-") && !WITHHELD_HEADERS.has(name)) || name === "user-agent";

/** Which headers reach `configurable`: the project's patterns, or `x-*` and `user-agent` without credentials. */
export function configurableHeaderSelector(patterns: HeaderPatterns | undefined): HeaderSelector {
  return patterns ? headerSelector(patterns, forwardedByDefault) : forwardedByDefault;
}

/**
 * The run config with the request's headers `http.configurable_headers` selects (by default
 * `x-*` but credentials, and `user-agent`) and the authenticated user (`langgraph_auth_user`,
 * `langgraph_auth_user_id`, `langgraph_auth_permissions`) in `configurable`, as the reference server does, so graph code
 * can read them and LangGraph copies them into the run's metadata. A header
 * overrides a `configurable` key of the same name.
 */
export function withRequestHeaders<T extends { config?: JsonObject | null }>(
  body: T,
  headers: IncomingHttpHeaders,
  user: RequestUser | undefined,
  select: HeaderSelector,
): T {
  const forwarded: JsonObject = selectHeaders(headers, select);
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
