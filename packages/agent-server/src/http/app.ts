import {
  buildOpenApiDocument,
  installErrorHandlers,
  installJsonParser,
  type RouteCatalog,
  serveApiDocs,
  lazySchemaCompilers,
} from "@berth/service-kit";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { Services } from "../services/index.js";
import type { AuthSettings } from "../config/auth-config.js";
import type { HttpSettings, RouteFamily } from "../config/http-config.js";
import { installApiKeyGuard } from "./api-key-guard.js";
import { installAuthentication } from "./auth/authentication.js";
import type { AuthenticationSetup } from "./auth/setup.js";
import { installCors } from "./cors.js";
import { installMountPrefix, mountPrefixRewriter } from "./mount-prefix.js";
import { configurableHeaderSelector } from "./request-headers.js";
import { installRequestLog } from "./request-log.js";
import type { RouteContext } from "./routes/context.js";
import { healthRoute } from "./routes/health.js";
import { assistantRoutes } from "./routes/assistants.js";
import { internalRoutes } from "./routes/internal.js";
import { metaRoutes, type ServerInfo } from "./routes/meta.js";
import { metricsRoutes } from "./routes/metrics.js";
import { cronRoutes } from "./routes/crons.js";
import { registerRoutes } from "./routes/route-table.js";
import { runRoutes, type StreamTimings } from "./routes/runs.js";
import { stateRoutes } from "./routes/state.js";
import { storeRoutes } from "./routes/memory-store.js";
import { threadRoutes } from "./routes/threads.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { uiRoutes } from "./routes/ui.js";
import { mcpRoutes } from "./routes/mcp.js";
import { protocolRoutes } from "./routes/protocol.js";
import { a2aRoutes } from "./routes/a2a.js";
import type { UiBundles } from "../graphs/ui-bundle.js";

export interface AppOptions {
  logger: Logger;
  /** Largest accepted request body, in bytes (413 above). */
  bodyLimit: number;
  info: ServerInfo;
  timings: StreamTimings;
  /** When set, every request but /ok must carry this key. */
  apiKey?: string;
  /** Serve `POST /internal/truncate` (test servers only). */
  internalTruncate?: boolean;
  /** Users are authenticated (the project's `authenticate`, or the built-in schemes). */
  authentication?: AuthenticationSetup;
  /** `auth.openapi`: the security schemes `/openapi.json` declares. */
  openapiSecurity?: AuthSettings["openapi"];
  /** `http` in langgraph.json (defaults without it). */
  http?: HttpSettings;
  /** `ui` in langgraph.json, bundled: served at `/ui/...` for the SDK's `LoadExternalComponent`. */
  ui?: UiBundles;
  /** LANGGRAPH_API_URL: where clients reach this server (the A2A cards' `url`); unset: as each request arrived. */
  apiUrl?: string;
}

/** With BERTH_API_KEY, the docs page asks for the key and sends it with "Try it out". */
const API_KEY_SECURITY = {
  components: { securitySchemes: { ApiKey: { type: "apiKey", in: "header", name: "X-Api-Key" } } },
  security: [{ ApiKey: [] }],
};
const NO_HTTP_SETTINGS: HttpSettings = { disabled: new Set() };

export async function buildApp(services: Services, options: AppOptions): Promise<FastifyInstance> {
  const http = options.http ?? NO_HTTP_SETTINGS;
  const prefix = http.mountPrefix;
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimit,
    return503OnClosing: false,
    schemaController: lazySchemaCompilers,
    ...(prefix ? { rewriteUrl: mountPrefixRewriter(prefix) } : {}),
  });
  installErrorHandlers(app, options.logger);
  // JSON bodies sent as text/plain (browsers' simple requests, Studio's among them) are parsed as JSON too.
  installJsonParser(app);
  if (prefix) installMountPrefix(app, prefix);
  if (http.loggingHeaders) installRequestLog(app, options.logger, http.loggingHeaders);
  await installCors(app, http.cors);
  // After CORS, so a refused browser request still carries the CORS headers that let the page read the 401.
  if (options.apiKey) installApiKeyGuard(app, options.apiKey);
  if (options.authentication) {
    installAuthentication(app, { ...options.authentication, serverKeyInXApiKey: !!options.apiKey, logger: options.logger });
  }

  // Protocol v2's WebSocket transport: upgrade requests pass the hooks above like any request.
  if (!http.disabled.has("runs")) await app.register(websocket, { options: { maxPayload: options.bodyLimit } });
  const catalog: RouteCatalog = [];
  const context = { app, catalog };
  registerRouteFamilies(context, services, options, (family) => !http.disabled.has(family));
  if (!http.disabled.has("meta")) {
    await serveApiDocs(app, () =>
      withSecurity(buildOpenApiDocument(catalog, { title: "Berth Agent Server", version: options.info.version }), options),
    );
  }
  return app;
}

/** The API's route families, but those `http.disable_*` switches off (absent, so 404s and out of the OpenAPI document). */
function registerRouteFamilies(
  context: RouteContext,
  services: Services,
  options: AppOptions,
  enabled: (family: RouteFamily) => boolean,
): void {
  registerRoutes(
    context,
    "meta",
    enabled("meta") ? [...metaRoutes(options.info, services.maintenance), ...metricsRoutes(services.metrics)] : [healthRoute],
  );
  if (enabled("assistants")) registerRoutes(context, "assistants", assistantRoutes(services.assistants));
  // As in the reference server: a thread's state and history belong to threads; its runs and every cron to runs.
  if (enabled("threads")) {
    registerRoutes(context, "threads", threadRoutes(services.threads));
    registerRoutes(context, "state", stateRoutes(services.graphState));
  }
  if (enabled("runs")) {
    const forwardHeaders = configurableHeaderSelector(options.http?.configurableHeaders);
    registerRoutes(context, "runs", runRoutes({ runs: services.runs, timings: options.timings, forwardHeaders }));
    const protocol = { protocol: services.protocol, heartbeatMs: options.timings.heartbeatMs, forwardHeaders };
    registerRoutes(context, "runs", protocolRoutes(protocol));
    registerRoutes(context, "crons", cronRoutes(services.crons));
    if (enabled("webhooks")) registerRoutes(context, "runs", webhookRoutes(services.webhooks));
  }
  if (enabled("store")) registerRoutes(context, "store", storeRoutes(services.store));
  if (enabled("mcp")) {
    const forwardHeaders = configurableHeaderSelector(options.http?.configurableHeaders);
    registerRoutes(
      context,
      "mcp",
      mcpRoutes(services, { info: options.info, keepAliveMs: options.timings.keepAliveMs, forwardHeaders }),
    );
  }
  if (enabled("a2a")) {
    const a2a = a2aRoutes(services, {
      info: options.info,
      mountPrefix: options.http?.mountPrefix,
      apiUrl: options.apiUrl,
      heartbeatMs: options.timings.heartbeatMs,
      forwardHeaders: configurableHeaderSelector(options.http?.configurableHeaders),
      logger: options.logger,
    });
    registerRoutes(context, "a2a", a2a);
  }
  if (options.internalTruncate) registerRoutes(context, "internal", internalRoutes(services.maintenance));
  if (options.ui?.size && enabled("ui")) {
    registerRoutes(context, "ui", uiRoutes(options.ui, services.assistants, { mountPrefix: options.http?.mountPrefix }));
  }
}

/** The document's security: the project's `auth.openapi` when it has one, else the server key's when it needs one. */
function withSecurity(document: Record<string, unknown>, options: AppOptions): Record<string, unknown> {
  const declared = options.openapiSecurity;
  if (declared?.securitySchemes || declared?.security) {
    return {
      ...document,
      components: { ...(document.components as object | undefined), securitySchemes: declared.securitySchemes ?? {} },
      ...(declared.security ? { security: declared.security } : {}),
    };
  }
  return options.apiKey ? { ...document, ...API_KEY_SECURITY } : document;
}
