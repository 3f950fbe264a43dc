import { z } from "zod";
import { defineRoute } from "@berth/service-kit";
import type { RouteContext } from "../context.js";
import { installTracingBodyParser, ZSTD_AVAILABLE } from "../../../tracing/request-body.js";
import type { TracingService } from "../../../tracing/service.js";
import { registerFeedbackRoutes } from "./feedback.js";
import { registerIngestRoutes } from "./ingest.js";
import { registerReadRoutes } from "./reads.js";
import type { ScopeOfRequest } from "./scope.js";

/** Paths open without an API key: /info, and the pre-signed feedback URLs (the token is the credential). */
export const TRACING_PUBLIC_PATHS = ["/api/v1/info", "/api/v1/feedback/tokens/"];

/**
 * What the client reads from LangSmith's /info: multipart ingestion, batches
 * of at most 100 operations and 20 MiB, gzip (and zstd where zlib has it).
 * The other instance flags are left unset, so their features stay off.
 */
function serverInfo(version: string) {
  return {
    version,
    license_expiration_time: null,
    batch_ingest_config: {
      use_multipart_endpoint: true,
      scale_up_qsize_trigger: 1000,
      scale_up_nthreads_limit: 16,
      scale_down_nempty_trigger: 4,
      size_limit: 100,
      size_limit_bytes: 20 * 1024 * 1024,
    },
    instance_flags: { gzip_body_enabled: true, zstd_compression_enabled: ZSTD_AVAILABLE },
    tenant_handle: null,
  };
}

/**
 * The tracing service under /api/v1 (point LANGSMITH_ENDPOINT at
 * `<control plane>/api/v1`). Its own scope: its body parser takes multipart
 * and compressed bodies larger than the app's JSON parser allows.
 */
export async function registerTracingRoutes(
  context: RouteContext,
  tracing: TracingService,
  options: { version: string; publicUrl?: string },
): Promise<void> {
  await context.app.register(async (scope) => {
    installTracingBodyParser(scope);
    const scoped: RouteContext = { ...context, app: scope };
    const scopeOf: ScopeOfRequest = async (request) => tracing.scopeOf(await context.caller(request));
    defineRoute(
      scope,
      context.catalog,
      {
        method: "GET",
        path: "/api/v1/info",
        summary: "What the langsmith client reads before ingesting (no API key needed)",
        tag: "Tracing: ingestion (LangSmith)",
        responses: { 200: { description: "Server info", schema: z.looseObject({ version: z.string() }) } },
      },
      async () => serverInfo(options.version),
    );
    registerIngestRoutes(scoped, scopeOf, tracing.ingest);
    registerFeedbackRoutes(scoped, scopeOf, tracing.feedback, options.publicUrl);
    registerReadRoutes(scoped, scopeOf, tracing.reader, tracing.feedback);
  });
}
