import type { AuthModuleSpec } from "../config/auth-config.js";
import { importProjectModule } from "./project-module.js";

/** What `authenticate` returns: an identity, or the user with its permissions and anything else. */
export type AuthenticateResult = string | ({ identity: string; permissions?: string[] } & Record<string, unknown>);

/** The `authorize` argument of a resource handler, as the SDK's `auth.on(...)` callbacks receive it. */
export interface AuthorizeRequest {
  event: string;
  resource: string;
  action: string;
  value: Record<string, unknown>;
  permissions: string[];
  user: Record<string, unknown>;
}

export type ResourceHandler = (request: AuthorizeRequest) => unknown;

/** The project's handlers: `authenticate`, and `on` callbacks by event (`threads:create`, `threads`, `*:read`, `*`). */
export interface AuthHandlers {
  authenticate?: (request: Request) => AuthenticateResult | Promise<AuthenticateResult>;
  callbacks: Record<string, ResourceHandler>;
}

export class AuthLoadError extends Error {
  constructor(spec: AuthModuleSpec, reason: string) {
    super(`failed to load auth handlers from ${spec.file} (export "${spec.exportName}"): ${reason}`);
    this.name = "AuthLoadError";
  }
}

/**
 * Imports the `Auth` object of `@langchain/langgraph-sdk/auth` that
 * `auth.path` names. The SDK keeps its handlers in `~handlerCache`, which is
 * what the official server reads too; any object shaped so is accepted.
 */
export async function loadAuthHandlers(spec: AuthModuleSpec): Promise<AuthHandlers> {
  let module: Record<string, unknown>;
  try {
    module = await importProjectModule(spec.file);
  } catch (error) {
    throw new AuthLoadError(spec, (error as Error).message);
  }
  const exported = module[spec.exportName] as { "~handlerCache"?: unknown } | undefined;
  const cache = exported?.["~handlerCache"] as { authenticate?: unknown; callbacks?: Record<string, unknown> } | undefined;
  if (!cache || typeof cache !== "object") {
    throw new AuthLoadError(spec, 'the export is not an Auth object of "@langchain/langgraph-sdk/auth"');
  }
  if (cache.authenticate !== undefined && typeof cache.authenticate !== "function") {
    throw new AuthLoadError(spec, "its authenticate handler is not a function");
  }
  const callbacks: Record<string, ResourceHandler> = {};
  for (const [event, callback] of Object.entries(cache.callbacks ?? {})) {
    if (typeof callback !== "function") throw new AuthLoadError(spec, `its "${event}" handler is not a function`);
    callbacks[event] = callback as ResourceHandler;
  }
  return { authenticate: cache.authenticate as AuthHandlers["authenticate"], callbacks };
}
