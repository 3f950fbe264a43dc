import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { AuthHandlers } from "../../graphs/auth-module.js";
import { type Access, asHttpException, type Authorizer } from "../../services/authorization.js";
import { type BuiltinAuthenticator, CredentialError } from "./builtin-schemes.js";
import { type RequestUser, STUDIO_USER, toRequestUser } from "./request-user.js";
import { servedWithoutAuthentication } from "./public-routes.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the authentication hook when the server authenticates users. */
    user?: RequestUser;
    /** What the user may do (the project's resource handlers); set with `user`. */
    access?: Access;
  }
}

export interface AuthenticationOptions {
  /** The project's `authenticate` handler (`auth.path`). */
  authenticate?: AuthHandlers["authenticate"];
  /** Built-in schemes from the environment, used when the project has no authenticate handler. */
  builtin?: BuiltinAuthenticator;
  /** The server's own key (BERTH_API_KEY, the router's) is in X-Api-Key: it names no user. */
  serverKeyInXApiKey: boolean;
  /** The project's resource handlers (`auth.on`). */
  authorizer: Authorizer;
  /** `auth.disable_studio_auth`: Studio's requests are authenticated like any other. */
  disableStudioAuth: boolean;
  logger: Logger;
}

/** Routes every client may call without a user, as the reference server has them: health, server info, the API's docs and `ui` files. */
function isPublic(request: FastifyRequest): boolean {
  return servedWithoutAuthentication(request.method, request.url.split("?", 1)[0]!);
}

/** A web-standard Request of what the client sent, which the SDK's `authenticate(request)` handlers read. */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const url = new URL(request.url, `${request.protocol}://${request.headers.host ?? "localhost"}`);
  const withBody = request.method !== "GET" && request.method !== "HEAD" && request.body !== undefined;
  return new Request(url, {
    method: request.method,
    headers,
    body: withBody ? (typeof request.body === "string" ? request.body : JSON.stringify(request.body)) : undefined,
  });
}

/**
 * Authenticates every request but the public ones, in a preValidation hook (the
 * body is parsed by then, so a handler may read it): the project's
 * `authenticate`, else the built-in schemes. A request without a user is a 401.
 */
export function installAuthentication(app: FastifyInstance, options: AuthenticationOptions): void {
  app.addHook("preValidation", async (request: FastifyRequest, reply: FastifyReply) => {
    if (isPublic(request)) return;
    if (!options.disableStudioAuth && request.headers["x-auth-scheme"] === "langsmith") {
      request.user = STUDIO_USER;
      request.access = options.authorizer.for(STUDIO_USER);
      return;
    }
    try {
      if (options.authenticate) {
        request.user = toRequestUser(await options.authenticate(webRequest(request)));
        request.access = options.authorizer.for(request.user);
        return;
      }
      const headers = options.serverKeyInXApiKey ? { ...request.headers, "x-api-key": undefined } : request.headers;
      const found = await options.builtin?.(headers);
      if (found === undefined) {
        return reply.status(401).send({ detail: "Missing credentials: send Authorization: Bearer <token or API key>" });
      }
      request.user = toRequestUser(found);
      request.access = options.authorizer.for(request.user);
    } catch (error) {
      if (error instanceof CredentialError) return reply.status(401).send({ detail: error.message });
      const http = asHttpException(error);
      if (http) return reply.status(http.status).headers(http.headers).send({ detail: http.message });
      options.logger.error({ err: error }, "the authenticate handler failed");
      return reply.status(500).send({ detail: "Authentication failed: the authenticate handler threw" });
    }
  });
}
