import type { MaintenanceService } from "../../services/maintenance.js";
import { healthRoute } from "./health.js";
import { type RouteDef, route } from "./route-table.js";

export interface ServerInfo {
  version: string;
  langgraph_js_version: string;
  /** Runs are traced (LANGSMITH_TRACING=true): reported as `flags.langsmith`. */
  tracing?: boolean;
}

export function metaRoutes(info: ServerInfo, maintenance: MaintenanceService): RouteDef[] {
  const body = {
    version: info.version,
    langgraph_js_version: info.langgraph_js_version,
    context: "js",
    server: "berth",
    flags: { assistants: true, crons: true, langsmith: info.tracing ?? false, langsmith_tracing_replicas: false },
  };
  return [
    healthRoute,
    route(
      {
        method: "GET",
        path: "/info",
        summary: "Server version and feature flags",
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
    ),
  ];
}
