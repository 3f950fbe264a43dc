import {
  buildOpenApiDocument,
  ForbiddenError,
  installErrorHandlers,
  installJsonParser,
  type RouteCatalog,
  serveApiDocs,
  lazySchemaCompilers,
} from "@berth/service-kit";
import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { authenticate } from "../api-keys/authenticate.js";
import type { Services } from "../services/index.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import { ownBaseUrl } from "./routes/base-url.js";
import { SECURED, type RouteContext } from "./routes/context.js";
import { registerAuthFlowRoutes } from "./routes/auth-flows.js";
import { registerAuthProviderRoutes } from "./routes/auth-providers.js";
import { registerAuthTokenRoutes } from "./routes/auth-tokens.js";
import { registerDashboardRoutes } from "./routes/dashboard.js";
import { registerDeploymentRoutes } from "./routes/deployments.js";
import { registerDeploymentMetricsRoutes } from "./routes/deployment-metrics.js";
import { registerInfoRoute } from "./routes/info.js";
import { registerIntegrationRoutes } from "./routes/integrations.js";
import { registerListenerRoutes } from "./routes/listeners.js";
import { registerListenerProtocolRoutes } from "./routes/listener-protocol.js";
import { registerLogRoutes } from "./routes/logs.js";
import { registerPrometheusRoutes } from "./routes/prometheus.js";
import { registerRegistryRoutes } from "./routes/registry.js";
import { registerRevisionRoutes } from "./routes/revisions.js";
import { registerRunWebhookRoutes } from "./routes/run-webhooks.js";
import { registerUploadRoutes } from "./routes/uploads.js";
import { registerTracingRoutes, TRACING_PUBLIC_PATHS } from "./routes/tracing/index.js";

/** The only routes a deployment's Auth Service key may call. */
const AUTH_SERVICE_KEY_PATHS = /^\/v2\/auth\/(authenticate|wait\/)/;

export interface AppOptions {
  logger: Logger;
  version: string;
  /** BERTH_CONTROL_PLANE_URL: the base of upload URLs (else taken from each request) and of OAuth redirect URIs. */
  publicUrl?: string;
  /** The address the control plane listens on, once it does: OAuth redirect URIs without a publicUrl. */
  listenUrl: () => string | undefined;
  /** The platform's routers (the embedded listener's, BERTH_LISTENER_ROUTER_URLS): the dashboard may call these. */
  routerUrls?: string[];
  /** BERTH_DASHBOARD_DIR: another build of the dashboard to serve (default: packages/dashboard/dist). */
  dashboardDir?: string;
}

/** The self-hosted prefix: every route is also served under it. */
const PREFIX = "/api-host";

/** Routes open without credentials (the upload PUT carries its own signature, the registry's token endpoint a push token). */
const PUBLIC_PATHS = ["/ok", "/info", "/openapi.json", "/docs", "/v2/uploads/", "/v1/registry/token", ...TRACING_PUBLIC_PATHS];
/** A push webhook carries its host's signature instead of an API key. */
const PUBLIC_PATTERNS = [/^\/v1\/integrations\/repo_host\/[^/]+\/webhook$/];
/** A provider's redirect to the Auth Service carries its state instead of an API key (GET only). */
const PUBLIC_REDIRECTS = /^\/v2\/auth\/(callback|setup)\//;

export async function buildApp(storage: ControlPlaneStorage, services: Services, options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    return503OnClosing: false,
    schemaController: lazySchemaCompilers,
    rewriteUrl: (request) => {
      const url = request.url ?? "/";
      return url === PREFIX || url.startsWith(`${PREFIX}/`) || url.startsWith(`${PREFIX}?`)
        ? url.slice(PREFIX.length) || "/"
        : url;
    },
  });
  installErrorHandlers(app, options.logger);
  installJsonParser(app);

  const catalog: RouteCatalog = [];
  const context: RouteContext = {
    app,
    catalog,
    caller: async (request) => {
      const caller = await authenticate(storage, request);
      if (caller.tracingOnly && !request.url.startsWith("/api/v1/")) {
        throw new ForbiddenError("This API key belongs to a deployment and may only send traces (/api/v1)");
      }
      if (caller.authServiceOnly && !AUTH_SERVICE_KEY_PATHS.test(request.url)) {
        throw new ForbiddenError(
          "This API key belongs to a deployment and may only ask for tokens (/v2/auth/authenticate, /v2/auth/wait)",
        );
      }
      return caller;
    },
  };
  app.get("/ok", async () => ({ ok: true }));
  registerPrometheusRoutes(context, services.prometheus, storage);
  registerInfoRoute(context, options.version);
  registerDashboardRoutes(app, {
    routerUrls: options.routerUrls ?? [],
    publicUrl: options.publicUrl,
    dist: options.dashboardDir,
  });
  registerDeploymentRoutes(context, services.deployments);
  registerDeploymentMetricsRoutes(context, services.deploymentMetrics);
  registerRegistryRoutes(context, services.registry);
  registerRevisionRoutes(context, services.revisions, services.deployments);
  registerRunWebhookRoutes(context, services.runWebhooks);
  registerLogRoutes(context, services.logs);
  registerListenerProtocolRoutes(context, services.listenerApi);
  await registerUploadRoutes(context, services.uploads, options.publicUrl);
  registerListenerRoutes(context, services.listeners);
  await registerIntegrationRoutes(context, services.integrations);
  const ownUrl = () => ownBaseUrl(options.publicUrl, options.listenUrl);
  registerAuthProviderRoutes(context, services.auth.providers, ownUrl);
  registerAuthFlowRoutes(context, services.auth.flows, ownUrl);
  registerAuthTokenRoutes(context, services.auth.tokens, services.auth.connections);
  await registerTracingRoutes(context, services.tracing, { version: options.version, publicUrl: options.publicUrl }); // tracing

  await serveApiDocs(app, () => {
    const document = {
      ...buildOpenApiDocument(catalog, { title: "Berth Control Plane", version: options.version }),
      components: {
        securitySchemes: {
          ApiKey: { type: "apiKey", in: "header", name: "X-Api-Key" },
          TenantId: { type: "apiKey", in: "header", name: "X-Tenant-Id" },
          BearerAuth: { type: "http", scheme: "bearer", description: "The API key as a bearer token" },
        },
      },
    };
    for (const [path, operations] of Object.entries(document.paths)) {
      if (PUBLIC_PATHS.some((open) => path.startsWith(open)) || PUBLIC_PATTERNS.some((open) => open.test(path))) continue;
      for (const [method, operation] of Object.entries(operations)) {
        if (method === "get" && PUBLIC_REDIRECTS.test(path)) continue;
        (operation as Record<string, unknown>).security = SECURED;
      }
    }
    return document;
  });
  return app;
}
