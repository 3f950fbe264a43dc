import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";

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

export interface DashboardOptions {
  /**
   * The platform's routers (base URLs, a deployment's stable URL being `<router>/d/<id>`): the only places other than
   * the control plane itself the page may send a key to. Never anything a workspace sets.
   */
  routerUrls: string[];
  /** BERTH_CONTROL_PLANE_URL: upload URLs point there, which may be another origin than the page's. */
  publicUrl?: string;
  dist?: string;
}

function originOf(url: string): string | undefined {
  try {
    const { origin, protocol } = new URL(url);
    return protocol === "http:" || protocol === "https:" ? origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the browser lets the page do: scripts, styles and images from the control plane only (no inline script, no
 * eval), connections to the control plane and the routers only, never framed, no plugins, no `<base>`.
 */
export function dashboardHeaders({ routerUrls, publicUrl }: DashboardOptions): Record<string, string> {
  const origins = [...new Set([...routerUrls, ...(publicUrl ? [publicUrl] : [])].map(originOf).filter(Boolean))];
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "font-src 'self'",
    `connect-src ${["'self'", ...origins].join(" ")}`,
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join("; ");
  return {
    "content-security-policy": policy,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=(), clipboard-read=()",
  };
}

/**
 * Serves the dashboard's static files: index.html at `/`, its hashed assets
 * under `/assets/`, and `dashboard.json` (the routers it may call). Without
 * credentials: the files hold no data, and the page asks for the API key
 * itself. Every other unknown path keeps the JSON 404.
 */
export function registerDashboardRoutes(app: FastifyInstance, options: DashboardOptions): void {
  const dist = options.dist ?? DASHBOARD_DIST;
  const headers = dashboardHeaders(options);
  const routerUrls = [...new Set(options.routerUrls.map((url) => url.replace(/\/+$/, "")))];
  const secured = (reply: FastifyReply) => reply.headers(headers);

  app.get("/", { schema: { hide: true } }, async (_request, reply) => {
    const index = join(dist, "index.html");
    if (!existsSync(index)) {
      return secured(reply)
        .status(503)
        .type("text/plain; charset=utf-8")
        .send("The dashboard is not built: run `npm run build` in Berth's folder, then reload.\n");
    }
    // The page names its assets by content hash: it is read again on every visit so a rebuild shows at once.
    return secured(reply)
      .type("text/html; charset=utf-8")
      .header("cache-control", "no-cache")
      .send(await readFile(index));
  });

  app.get<{ Params: { name: string } }>("/assets/:name", { schema: { hide: true } }, async (request, reply) => {
    const { name } = request.params;
    const file = join(dist, "assets", name);
    if (!ASSET_NAME.test(name) || name.startsWith(".") || !existsSync(file)) return reply.callNotFound();
    return secured(reply)
      .type(CONTENT_TYPES[extname(name)] ?? "application/octet-stream")
      .header("cache-control", "public, max-age=31536000, immutable")
      .send(await readFile(file));
  });

  // The routers the page opens deployments through; the same list its Content-Security-Policy allows.
  app.get("/dashboard.json", { schema: { hide: true } }, async (_request, reply) =>
    secured(reply).header("cache-control", "no-cache").send({ router_urls: routerUrls }),
  );

  // The official deploy CLI prints this as its "View status" link for a local control plane: lead it to the deployment's page.
  // Relative, so it lands under /api-host/ when it came that way.
  app.get<{ Params: { deployment_id: string } }>(
    "/o/:tenant_id/host/deployments/:deployment_id",
    { schema: { hide: true } },
    async (request, reply) =>
      secured(reply).redirect(`../../../../#/deployments/${encodeURIComponent(request.params.deployment_id)}`),
  );
}
