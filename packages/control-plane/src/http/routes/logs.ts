import { defineRoute } from "@berth/service-kit";
import type { LogKind } from "../../storage/types.js";
import type { LogService } from "../../services/logs.js";
import { Detail } from "../schemas/common.js";
import { LogPage, LogQueryBody, ProjectIdParams, ProjectRevisionParams } from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

const tag = "Logs (v1)";

/**
 * Build and server logs, on the paths the official deploy CLI reads (a
 * "project" is a deployment). `/deploy_logs` without a revision reads the
 * server logs of every revision.
 */
export function registerLogRoutes({ app, catalog, caller }: RouteContext, logs: LogService): void {
  const routes: { path: string; kind: LogKind; summary: string; perRevision: boolean }[] = [
    {
      path: "/v1/projects/:deployment_id/revisions/:revision_id/build_logs",
      kind: "build",
      summary: "A revision's build logs",
      perRevision: true,
    },
    {
      path: "/v1/projects/:deployment_id/revisions/:revision_id/deploy_logs",
      kind: "deploy",
      summary: "A revision's server logs",
      perRevision: true,
    },
    {
      path: "/v1/projects/:deployment_id/deploy_logs",
      kind: "deploy",
      summary: "A deployment's server logs",
      perRevision: false,
    },
  ];
  for (const route of routes) {
    defineRoute(
      app,
      catalog,
      {
        method: "POST",
        path: route.path,
        summary: route.summary,
        tag,
        params: route.perRevision ? ProjectRevisionParams : ProjectIdParams,
        body: LogQueryBody,
        bodyOptional: true,
        responses: {
          200: { description: "A page of log lines", schema: LogPage },
          404: { description: "Not found", schema: Detail },
        },
      },
      async ({ params, body, request }) => {
        const { tenantId } = await caller(request);
        const revisionId = "revision_id" in params ? (params.revision_id as string) : undefined;
        return logs.query(tenantId, params.deployment_id, revisionId, route.kind, body);
      },
    );
  }
}
