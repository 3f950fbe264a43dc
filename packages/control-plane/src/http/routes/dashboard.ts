import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";

/** The dashboard's build (packages/dashboard, built by Vite at install): the same place from src/ and from dist/. */
const DASHBOARD_DIST = fileURLToPath(new URL("../../../../dashboard/dist/", import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
};
/** Vite's asset names: a base, a content hash, an extension; nothing that could climb out of assets/. */
const ASSET_NAME = /^[\w.-]+$/;

/**
 * Serves the dashboard's static files: index.html at `/`, its hashed assets
 * under `/assets/`. Without credentials: the files hold no data, and the page
 * asks for the API key itself. Every other unknown path keeps the JSON 404.
 */
export function registerDashboardRoutes(app: FastifyInstance, dist = DASHBOARD_DIST): void {
  app.get("/", { schema: { hide: true } }, async (_request, reply) => {
    const index = join(dist, "index.html");
    if (!existsSync(index)) {
      return reply
        .status(503)
        .type("text/plain; charset=utf-8")
        .send("The dashboard is not built: run `npm run build` in Berth's folder, then reload.\n");
    }
    // The page names its assets by content hash: it is read again on every visit so a rebuild shows at once.
    return reply
      .type("text/html; charset=utf-8")
      .header("cache-control", "no-cache")
      .send(await readFile(index));
  });

  app.get<{ Params: { name: string } }>("/assets/:name", { schema: { hide: true } }, async (request, reply) => {
    const { name } = request.params;
    const file = join(dist, "assets", name);
    if (!ASSET_NAME.test(name) || name.startsWith(".") || !existsSync(file)) return reply.callNotFound();
    return reply
      .type(CONTENT_TYPES[extname(name)] ?? "application/octet-stream")
      .header("cache-control", "public, max-age=31536000, immutable")
      .send(await readFile(file));
  });

  // The official deploy CLI prints this as its "View status" link for a local control plane: lead it to the deployment's page.
  // Relative, so it lands under /api-host/ when it came that way.
  app.get<{ Params: { deployment_id: string } }>(
    "/o/:tenant_id/host/deployments/:deployment_id",
    { schema: { hide: true } },
    async (request, reply) => reply.redirect(`../../../../#/deployments/${encodeURIComponent(request.params.deployment_id)}`),
  );
}
