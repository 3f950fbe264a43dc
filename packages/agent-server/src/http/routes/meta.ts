import { defineRoute } from "@berth/service-kit";
import type { MaintenanceService } from "../../services/maintenance.js";
import type { RouteContext } from "./context.js";
import { registerHealthRoute } from "./health.js";

export interface ServerInfo {
  version: string;
  langgraph_js_version: string;
  /** Runs are traced (LANGSMITH_TRACING=true): reported as `flags.langsmith`. */
  tracing?: boolean;
}

export function registerMetaRoutes(context: RouteContext, info: ServerInfo, maintenance: MaintenanceService): void {
  const { app, catalog } = context;
  registerHealthRoute(context);

  const body = {
    version: info.version,
    langgraph_js_version: info.langgraph_js_version,
    context: "js",
    server: "berth",
    flags: { assistants: true, crons: true, langsmith: info.tracing ?? false, langsmith_tracing_replicas: false },
  };
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/info",
      summary: "Server version and feature flags",
      tag: "meta",
      responses: { 200: { description: "Version, flags and the storage's sizes (`storage`, null when unmeasurable)" } },
    },
    async ({ request }) => {
      // Berth's addition beside the official fields; an unreachable database must not fail /info.
      const storage = await maintenance.sizes().catch((err: unknown) => {
        request.log.warn({ err }, "measuring storage sizes failed");
        return null;
      });
      return { ...body, storage };
    },
  );
}
