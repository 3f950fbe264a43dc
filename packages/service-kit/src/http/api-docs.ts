import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";

/**
 * Paths a browser opens without credentials: the health check, the OpenAPI
 * document and its pages (the pages hold no data; their requests carry the key
 * the reader enters).
 */
export function servedWithoutKey(method: string, pathname: string): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  return pathname === "/ok" || pathname === "/openapi.json" || pathname === "/docs" || pathname.startsWith("/docs/");
}

/**
 * Serves `document` at `/openapi.json` and its Swagger UI at `/docs/`.
 * Every URL is relative, so both work behind a path prefix (a deployment's
 * `/d/<id>/` on the router): `/docs` redirects to `docs/`, whose assets are
 * `./static/...`, and the document names its server relative to where it is
 * read from, so "Try it out" calls the API under the same prefix.
 */
export async function serveApiDocs(app: FastifyInstance, document: Record<string, unknown>): Promise<void> {
  const servedAt = (base: string) => ({ ...document, servers: [{ url: base, description: "This server" }] });
  const atRoot = servedAt(".");
  app.addHook("onRequest", async (request, reply) => {
    const [pathname, query] = splitUrl(request.url);
    if (pathname === "/docs" && request.method === "GET") return reply.redirect(`docs/${query}`);
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => atRoot);
  await app.register(swagger, { mode: "static", specification: { document: document as never } });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    uiConfig: { persistAuthorization: true },
    // Read from /docs/json: the API is one level up.
    transformSpecification: () => servedAt(".."),
  });
}

function splitUrl(url: string): [string, string] {
  const at = url.indexOf("?");
  return at < 0 ? [url, ""] : [url.slice(0, at), url.slice(at)];
}
