import { defineRoute, ForbiddenError, UnauthorizedError } from "@berth/service-kit";
import type { FastifyRequest } from "fastify";
import { hashApiKey, isAuthServiceOnly, isTracingOnly } from "../../api-keys/api-keys.js";
import { presentedKey } from "../../api-keys/authenticate.js";
import type { PrometheusMetrics } from "../../services/prometheus.js";
import type { ControlPlaneStorage } from "../../storage/types.js";
import { Detail } from "../schemas/common.js";
import type { RouteContext } from "./context.js";

/** The route label of a request no route matched (404s): raw paths would make a series per probe. */
const UNMATCHED = "unmatched";

/**
 * The metrics cover every workspace, so only a key valid for all of them may
 * read them; it needs no X-Tenant-Id (a Prometheus scrape sends just the
 * bearer token).
 */
async function requireAdminKey(storage: ControlPlaneStorage, request: FastifyRequest): Promise<void> {
  const key = presentedKey(request);
  if (!key) throw new UnauthorizedError("Missing API key: send Authorization: Bearer <admin key> (or X-Api-Key)");
  const record = await storage.apiKeys.findByHash(hashApiKey(key));
  if (!record) throw new UnauthorizedError("Invalid API key");
  if (record.revoked_at) throw new ForbiddenError("API key has been revoked");
  if (!record.all_tenants || isTracingOnly(record) || isAuthServiceOnly(record)) {
    throw new ForbiddenError(
      "The control plane's metrics cover every workspace: they need an admin key (valid for all workspaces)",
    );
  }
}

/**
 * `GET /metrics`: the control plane's own metrics in the Prometheus text
 * format, for an existing Prometheus and Grafana; and the hook that times
 * every API request for them.
 */
export function registerPrometheusRoutes(
  { app, catalog }: RouteContext,
  metrics: PrometheusMetrics,
  storage: ControlPlaneStorage,
): void {
  app.addHook("onResponse", async (request, reply) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? UNMATCHED, reply.statusCode, reply.elapsedTime / 1000);
  });
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/metrics",
      summary:
        "The control plane's own metrics (Prometheus text format): deployments and revisions by status, builds, API latencies",
      tag: "Server",
      responses: {
        200: { description: "Prometheus text exposition format (text/plain; version=0.0.4)" },
        401: { description: "No or an unknown API key", schema: Detail },
        403: { description: "A key that does not reach every workspace (not an admin key)", schema: Detail },
      },
    },
    async ({ request, reply }) => {
      await requireAdminKey(storage, request);
      const { contentType, text } = await metrics.scrape();
      return reply.type(contentType).send(text);
    },
  );
}
