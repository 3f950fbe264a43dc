import type { IncomingMessage } from "node:http";
import type { FastifyInstance } from "fastify";

/** Requests that asked for a path outside the prefix (marked while their URL is rewritten, before Fastify sees them). */
const outside = new WeakSet<IncomingMessage>();

/**
 * `http.mount_prefix`: the routes stay declared at the root and the prefix is taken off each URL before routing,
 * so every hook (keys, authentication, the docs' relative links) sees the paths it knows. `/ok` is also answered at
 * the root, where a container's health check asks.
 */
export function mountPrefixRewriter(prefix: string): (request: IncomingMessage) => string {
  return (request) => {
    const url = request.url ?? "/";
    const rest = url.slice(prefix.length);
    if (url.startsWith(prefix) && (rest === "" || rest.startsWith("/") || rest.startsWith("?"))) {
      return rest.startsWith("/") ? rest : `/${rest}`;
    }
    if (url.split("?", 1)[0] !== "/ok") outside.add(request);
    return url;
  };
}

/** Paths outside the prefix are 404s (first, before keys or CORS), and the locations the API answers with carry the prefix. */
export function installMountPrefix(app: FastifyInstance, prefix: string): void {
  app.addHook("onRequest", async (request, reply) => {
    if (outside.has(request.raw)) {
      return reply.status(404).send({ detail: `No route for ${request.method} ${request.url.split("?", 1)[0]}` });
    }
  });
  app.addHook("onSend", async (request, reply) => {
    if (outside.has(request.raw)) return;
    for (const name of ["content-location", "location"]) {
      const value = reply.getHeader(name);
      if (typeof value === "string" && value.startsWith("/") && !value.startsWith("//")) reply.header(name, `${prefix}${value}`);
    }
  });
}
