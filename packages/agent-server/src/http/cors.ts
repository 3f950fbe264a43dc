import cors, { type FastifyCorsOptions } from "@fastify/cors";
import type { FastifyInstance } from "fastify";
import type { CorsSettings } from "../config/http-config.js";

/** Headers a browser client must be able to read (run locations, paging), whatever the project exposes besides. */
const EXPOSED_HEADERS = ["content-location", "location", "x-pagination-total", "x-pagination-next"];
/** Every method the API uses: the plugin's default (GET, HEAD, POST) would stop a browser UI from patching an assistant or deleting a thread. */
const API_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/**
 * CORS as `http.cors` describes it (any origin without it), and Chrome's Private Network Access:
 * a page served over https (Studio) may reach a server on localhost or a private address only when the
 * preflight answers `Access-Control-Allow-Private-Network: true`.
 */
export async function installCors(app: FastifyInstance, settings: CorsSettings | undefined): Promise<void> {
  app.addHook("onSend", async (request, reply) => {
    if (
      request.method === "OPTIONS" &&
      request.headers["access-control-request-private-network"] === "true" &&
      reply.hasHeader("access-control-allow-origin")
    ) {
      reply.header("access-control-allow-private-network", "true");
    }
  });
  await app.register(
    cors,
    settings ? corsOptions(settings) : { origin: "*", methods: API_METHODS, exposedHeaders: EXPOSED_HEADERS },
  );
}

function corsOptions(settings: CorsSettings): FastifyCorsOptions {
  const anyOrigin = settings.allowOrigins.includes("*");
  const listed = new Set(settings.allowOrigins);
  const allowed = (origin: string) => anyOrigin || listed.has(origin) || (settings.allowOriginRegex?.test(origin) ?? false);
  const exposed = new Set([...EXPOSED_HEADERS, ...settings.exposeHeaders.map((name) => name.toLowerCase())]);
  const methods = settings.allowMethods;
  const headers = settings.allowHeaders;
  return {
    // With credentials a browser refuses `*`: the allowed origin is echoed instead.
    origin:
      anyOrigin && !settings.allowCredentials
        ? "*"
        : (origin: string | undefined, done: (error: Error | null, allow: boolean) => void) =>
            done(null, origin !== undefined && allowed(origin)),
    methods: !methods || methods.includes("*") ? API_METHODS : methods,
    // `*` (or nothing): whatever the preflight asks for.
    allowedHeaders: !headers || headers.includes("*") ? undefined : headers,
    credentials: settings.allowCredentials,
    exposedHeaders: [...exposed],
    maxAge: settings.maxAgeSeconds,
  };
}
