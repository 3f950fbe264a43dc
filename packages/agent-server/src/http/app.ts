import cors from "@fastify/cors";
import {
  buildOpenApiDocument,
  installErrorHandlers,
  installJsonParser,
  type RouteCatalog,
  serveApiDocs,
} from "@berth/service-kit";
import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { Services } from "../services/index.js";
import type { AuthSettings } from "../config/auth-config.js";
import { installApiKeyGuard } from "./api-key-guard.js";
import { installAuthentication } from "./auth/authentication.js";
import type { AuthenticationSetup } from "./auth/setup.js";
import { registerAssistantRoutes } from "./routes/assistants.js";
import { registerInternalRoutes } from "./routes/internal.js";
import { registerMetaRoutes, type ServerInfo } from "./routes/meta.js";
import { registerMetricsRoutes } from "./routes/metrics.js";
import { registerCronRoutes } from "./routes/crons.js";
import { registerRunRoutes, type StreamTimings } from "./routes/runs.js";
import { registerStateRoutes } from "./routes/state.js";
import { registerStoreRoutes } from "./routes/store.js";
import { registerThreadRoutes } from "./routes/threads.js";
import { registerWebhookRoutes } from "./routes/webhooks.js";

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
}

/** Headers a browser client must be able to read (run locations, paging). */
const EXPOSED_HEADERS = ["content-location", "location", "x-pagination-total", "x-pagination-next"];
/** With BERTH_API_KEY, the docs page asks for the key and sends it with "Try it out". */
const API_KEY_SECURITY = {
  components: { securitySchemes: { ApiKey: { type: "apiKey", in: "header", name: "X-Api-Key" } } },
  security: [{ ApiKey: [] }],
};
const CORS_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

export async function buildApp(services: Services, options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: options.bodyLimit, return503OnClosing: false });
  installErrorHandlers(app, options.logger);
  installJsonParser(app);
  // Every method the API uses: the plugin's default (GET, HEAD, POST) would stop a browser UI from patching an assistant or deleting a thread.
  await app.register(cors, { origin: "*", methods: CORS_METHODS, exposedHeaders: EXPOSED_HEADERS });
  // After CORS, so a refused browser request still carries the CORS headers that let the page read the 401.
  if (options.apiKey) installApiKeyGuard(app, options.apiKey);
  if (options.authentication) {
    installAuthentication(app, { ...options.authentication, serverKeyInXApiKey: !!options.apiKey, logger: options.logger });
  }

  const catalog: RouteCatalog = [];
  const context = { app, catalog };
  registerMetaRoutes(context, options.info, services.maintenance);
  registerMetricsRoutes(context, services.metrics);
  registerAssistantRoutes(context, services.assistants);
  registerThreadRoutes(context, services.threads);
  registerStateRoutes(context, services.graphState);
  registerRunRoutes(context, services.runs, options.timings);
  registerCronRoutes(context, services.crons);
  registerWebhookRoutes(context, services.webhooks);
  registerStoreRoutes(context, services.store);
  if (options.internalTruncate) registerInternalRoutes(context, services.maintenance);

  const document = buildOpenApiDocument(catalog, { title: "Berth Agent Server", version: options.info.version });
  await serveApiDocs(app, withSecurity(document, options));
  return app;
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
