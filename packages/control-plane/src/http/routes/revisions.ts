import { defineRoute } from "@berth/service-kit";
import type { RevisionService } from "../../services/revisions.js";
import { Detail } from "../schemas/common.js";
import { DeploymentIdParams, Revision, RevisionIdParams, RevisionListQuery, RevisionPage } from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

const tag = "Deployments (v2)";

export function registerRevisionRoutes({ app, catalog, caller }: RouteContext, revisions: RevisionService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/deployments/:deployment_id/revisions",
      summary: "List a deployment's revisions, newest first",
      tag,
      params: DeploymentIdParams,
      query: RevisionListQuery,
      responses: { 200: { description: "A page, and the offset of the next one", schema: RevisionPage }, 404: { description: "Not found", schema: Detail } },
    },
    async ({ params, query, request }) => {
      const { tenantId } = await caller(request);
      const { status, ...page } = query;
      return revisions.list(tenantId, params.deployment_id, { ...page, statuses: status });
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/deployments/:deployment_id/revisions/:revision_id",
      summary: "Get a revision",
      tag,
      params: RevisionIdParams,
      responses: { 200: { description: "The revision", schema: Revision }, 404: { description: "Not found", schema: Detail } },
    },
    async ({ params, request }) =>
      revisions.get((await caller(request)).tenantId, params.deployment_id, params.revision_id),
  );
}
