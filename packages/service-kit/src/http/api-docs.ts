import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

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
 * Serves the OpenAPI document at `/openapi.json` and its Swagger UI at `/docs/`.
 * Every URL is relative, so both work behind a path prefix (a deployment's
 * `/d/<id>/` on the router): `/docs` redirects to `docs/`, whose assets are
 * `./static/...`, and the document names its server relative to where it is
 * read from, so "Try it out" calls the API under the same prefix. Both are
 * made on their first read: turning every route's zod schemas into JSON
 * Schema, and loading the Swagger UI plugin (with its YAML and static-file
 * modules, ~100 of them), are a noticeable part of a start and of an idle
 * server's memory.
 */
export async function serveApiDocs(app: FastifyInstance, buildDocument: () => Record<string, unknown>): Promise<void> {
  let document: Record<string, unknown> | undefined;
  const servedAt = (base: string) => ({
    ...(document ??= buildDocument()),
    servers: [{ url: base, description: "This server" }],
  });
  app.addHook("onRequest", async (request, reply) => {
    const [pathname, query] = splitUrl(request.url);
    if (pathname === "/docs" && request.method === "GET") return reply.redirect(`docs/${query}`);
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => servedAt("."));
  let pages: Promise<FastifyInstance> | undefined;
  const servePages = async (request: FastifyRequest, reply: FastifyReply) => {
    const inner = await (pages ??= docsPages(() => servedAt("..")));
    // The pages' own instance answers on the same connection (the URL is already stripped of any mount prefix).
    reply.hijack();
    inner.routing(request.raw, reply.raw);
  };
  app.addHook("onClose", async () => {
    await (await pages)?.close();
  });
  app.get("/docs/", { schema: { hide: true } }, servePages);
  app.get("/docs/*", { schema: { hide: true } }, servePages);
}

/** A Fastify instance of its own serving the Swagger UI pages under `/docs/`, reading `document`. */
async function docsPages(document: () => Record<string, unknown>): Promise<FastifyInstance> {
  const [{ default: fastify }, { default: swagger }, { default: swaggerUi }] = await Promise.all([
    import("fastify"),
    import("@fastify/swagger"),
    import("@fastify/swagger-ui"),
  ]);
  const pages = fastify({ logger: false });
  // The pages read the document through transformSpecification below: the plugin's own copy is a placeholder.
  const placeholder = { openapi: "3.0.3", info: { title: "", version: "" }, paths: {} };
  await pages.register(swagger, { mode: "static", specification: { document: placeholder as never } });
  await pages.register(swaggerUi, {
    routePrefix: "/docs",
    uiConfig: { persistAuthorization: true },
    transformSpecificationClone: false,
    // Read from /docs/json: the API is one level up.
    transformSpecification: document,
  });
  await pages.ready();
  return pages;
}

function splitUrl(url: string): [string, string] {
  const at = url.indexOf("?");
  return at < 0 ? [url, ""] : [url.slice(0, at), url.slice(at)];
}
