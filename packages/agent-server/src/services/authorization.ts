import { ForbiddenError, HttpStatusError } from "@berth/service-kit";
import type { ResourceHandler } from "../graphs/auth-module.js";
import type { JsonObject, MetadataScope } from "../storage/types.js";

export type AuthResource = "threads" | "assistants" | "crons" | "store";

/** The events of the SDK's `auth.on(...)`, by resource. */
export type AuthEvent =
  | `threads:${"create" | "read" | "update" | "delete" | "search" | "create_run"}`
  | `assistants:${"create" | "read" | "update" | "delete" | "search"}`
  | `crons:${"create" | "read" | "update" | "delete" | "search"}`
  | `store:${"put" | "get" | "search" | "list_namespaces" | "delete"}`;

/** The authenticated user of a request, as resource handlers and graphs see it (`config.configurable.langgraph_auth_user`). */
export interface AuthUser extends Record<string, unknown> {
  identity: string;
  permissions: string[];
  is_authenticated: boolean;
  display_name: string;
}

/** What a handler allowed: the scope the resource's metadata must contain (none: any), and the value as it left it. */
export interface Authorized<T> {
  scope?: MetadataScope;
  value: T;
  /** A handler ran (and may have changed the value). */
  handled?: boolean;
}

/** What one request may do: every operation of the services asks it first, and applies its answer in the query. */
export interface Access {
  readonly user?: AuthUser;
  authorize<T extends object>(event: AuthEvent, value: T): Promise<Authorized<T>>;
}

/** Work no client asked for (cron ticks, the server's own setup), and servers without resource handlers. */
export const UNRESTRICTED: Access = { authorize: async (_event, value) => ({ value }) };

/**
 * The project's `auth.on(...)` handlers. Each event runs the most specific one
 * (`threads:create`, `threads`, `*:create`, `*`), which may deny (`false`, or an
 * `HTTPException`), change the value (stamp `metadata.owner`), or return a
 * filter on the resource's metadata: `{key: value}`, `{key: {$eq}}` or
 * `{key: {$contains}}`.
 */
export class Authorizer {
  constructor(private readonly handlers: Readonly<Record<string, ResourceHandler>>) {}

  /** Whether the project registered any resource handler. */
  get enabled(): boolean {
    return Object.keys(this.handlers).length > 0;
  }

  /** The access of a request by `user`; a request without a user (the server has no authentication) is not restricted. */
  for(user: AuthUser | undefined): Access {
    if (!user || !this.enabled) return user ? { user, authorize: UNRESTRICTED.authorize } : UNRESTRICTED;
    return { user, authorize: (event, value) => this.authorize(user, event, value) };
  }

  private async authorize<T extends object>(user: AuthUser, event: AuthEvent, value: T): Promise<Authorized<T>> {
    const [resource, action] = event.split(":") as [AuthResource, string];
    const key = [event, resource, `*:${action}`, "*"].find((candidate) => this.handlers[candidate]);
    if (!key) return { value };
    let result: unknown;
    try {
      result = await this.handlers[key]!({
        event,
        resource,
        action,
        value: value as Record<string, unknown>,
        permissions: user.permissions,
        user,
      });
    } catch (error) {
      const http = asHttpException(error);
      if (http) throw new HttpStatusError(http.status, http.message || "Forbidden", http.headers);
      throw error;
    }
    if (result === undefined || result === null || result === true) return { value, handled: true };
    if (result === false) throw new ForbiddenError("Forbidden");
    if (typeof result !== "object" || Array.isArray(result)) {
      throw new HttpStatusError(
        500,
        `The "${key}" auth handler returned ${typeof result}: expected a filter object, a boolean or nothing`,
      );
    }
    return { scope: scopeOf(result as Record<string, unknown>, key), value, handled: true };
  }
}

/**
 * A handler's filter as the JSON document the metadata must contain: `{k: v}`
 * and `{k: {$eq: v}}` as `{k: v}`; `{k: {$contains: v}}` as `{k: [v]}` (the
 * metadata value is an array holding v, or every item of v when it is one).
 */
function scopeOf(filter: Record<string, unknown>, handler: string): MetadataScope | undefined {
  const scope: JsonObject = {};
  for (const [field, condition] of Object.entries(filter)) {
    if (condition === null || typeof condition !== "object" || Array.isArray(condition)) {
      scope[field] = condition as JsonObject[string];
    } else if ("$eq" in condition) {
      scope[field] = (condition as { $eq: JsonObject[string] }).$eq;
    } else if ("$contains" in condition) {
      const wanted = (condition as { $contains: JsonObject[string] }).$contains;
      scope[field] = Array.isArray(wanted) ? wanted : [wanted];
    } else {
      // An operator Berth does not know must not silently let every resource through.
      throw new HttpStatusError(
        500,
        `The "${handler}" auth handler returned an unsupported filter for "${field}": use a value, {$eq} or {$contains}`,
      );
    }
  }
  return Object.keys(scope).length > 0 ? scope : undefined;
}

/** An `HTTPException` of `@langchain/langgraph-sdk/auth` (or anything shaped like it): its status, message and headers. */
export function asHttpException(
  error: unknown,
): { status: number; message: string; headers: Record<string, string> } | undefined {
  if (!(error instanceof Error)) return undefined;
  const status = (error as { status?: unknown }).status;
  if (typeof status !== "number" || status < 400 || status > 599) return undefined;
  const raw = (error as { headers?: unknown }).headers;
  const headers: Record<string, string> = {};
  if (raw && typeof raw === "object") {
    const entries = raw instanceof Headers ? [...raw.entries()] : Object.entries(raw as Record<string, unknown>);
    for (const [name, value] of entries) if (typeof value === "string") headers[name] = value;
  }
  return { status, message: error.message, headers };
}

/** The metadata a handler left on the value: it may have stamped, replaced or removed it. */
export function metadataOf(value: { metadata?: unknown }): JsonObject {
  const metadata = value.metadata;
  return metadata && typeof metadata === "object" && !Array.isArray(metadata) ? (metadata as JsonObject) : {};
}
