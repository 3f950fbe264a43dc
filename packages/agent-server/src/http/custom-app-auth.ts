import { createHash, timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import type { HttpSettings } from "../config/http-config.js";
import { asHttpException } from "../services/authorization.js";
import type { AuthenticationSetup } from "./auth/setup.js";
import { CredentialError } from "./auth/builtin-schemes.js";
import { toRequestUser } from "./auth/request-user.js";
import { servedWithoutAuthentication } from "./auth/public-routes.js";

/** Checks a web Request as the API's hooks do; undefined: it may pass, else the refusal to answer with. */
export type RequestGate = (request: Request) => Promise<Response | undefined>;

const digest = (key: string) => createHash("sha256").update(key).digest();

const refuse = (status: number, detail: string, headers: Record<string, string> = {}) =>
  Response.json({ detail }, { status, headers });

/** Preflights, the health check, the docs, `/info` and `ui` files need no credentials, as on the API's routes. */
function isPublic(request: Request): boolean {
  return servedWithoutAuthentication(request.method, new URL(request.url).pathname);
}

/**
 * The server key (BERTH_API_KEY) guards the whole server, the project's routes too: checked before the project's
 * app sees a request. The API's routes check it again (cheap) in their own hook.
 */
export function serverKeyGate(apiKey: string): RequestGate {
  const expected = digest(apiKey);
  return async (request) => {
    if (isPublic(request)) return undefined;
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization")?.trim() ?? "");
    const key = request.headers.get("x-api-key")?.trim() || bearer?.[1]?.trim();
    if (!key) return refuse(401, "Missing API key: send X-Api-Key (or Authorization: Bearer <key>)");
    return timingSafeEqual(digest(key), expected) ? undefined : refuse(401, "Invalid API key");
  };
}

/**
 * Berth's authentication of users (the project's `authenticate`, else the built-in schemes), for requests before the
 * project's app: what `enable_custom_route_auth` and `middleware_order: auth_first` ask for. Same outcomes as the
 * API's hook (auth/authentication.ts): 401 without credentials, the handler's HTTPException as it says, 500 if it throws.
 */
export function authenticationGate(setup: AuthenticationSetup, serverKeyInXApiKey: boolean, logger: Logger): RequestGate {
  return async (request) => {
    if (isPublic(request)) return undefined;
    if (!setup.disableStudioAuth && request.headers.get("x-auth-scheme") === "langsmith") return undefined;
    try {
      if (setup.authenticate) {
        toRequestUser(await setup.authenticate(request.clone()));
        return undefined;
      }
      const headers: Record<string, string | undefined> = Object.fromEntries(request.headers);
      if (serverKeyInXApiKey) headers["x-api-key"] = undefined;
      const found = await setup.builtin?.(headers);
      if (found === undefined) return refuse(401, "Missing credentials: send Authorization: Bearer <token or API key>");
      toRequestUser(found);
      return undefined;
    } catch (error) {
      if (error instanceof CredentialError) return refuse(401, error.message);
      const http = asHttpException(error);
      if (http) return refuse(http.status, http.message, http.headers);
      logger.error({ err: error }, "the authenticate handler failed");
      return refuse(500, "Authentication failed: the authenticate handler threw");
    }
  };
}

/** The checks made before the project's app sees a request, as the settings ask for them. */
export function customAppGates(options: {
  apiKey?: string;
  authentication?: AuthenticationSetup;
  http: HttpSettings;
  logger: Logger;
}): RequestGate[] {
  const gates: RequestGate[] = [];
  if (options.apiKey) gates.push(serverKeyGate(options.apiKey));
  const authFirst = options.http.enableCustomRouteAuth || options.http.middlewareOrder === "auth_first";
  if (options.authentication && authFirst) {
    gates.push(authenticationGate(options.authentication, !!options.apiKey, options.logger));
  }
  return gates;
}
