import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { IntegrationService } from "../../services/integrations.js";
import { NOT_FOUND_RESPONSE } from "../schemas/common.js";
import { Integration, IntegrationIdParams, Repository } from "../schemas/integrations.js";
import type { RouteContext } from "./context.js";

export function registerIntegrationRoutes({ app, catalog, caller }: RouteContext, integrations: IntegrationService): void {
  const tag = "Integrations (v1)";
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v1/integrations/repo_host/install",
      summary: "The workspace's git-host integrations (ids for source_config.integration_id)",
      tag,
      responses: { 200: { description: "Integrations", schema: z.array(Integration) } },
    },
    async ({ request }) => integrations.list((await caller(request)).tenantId),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v1/integrations/repo_host/:integration_id/repos",
      summary: "The repositories an integration may deploy",
      tag,
      params: IntegrationIdParams,
      responses: { 200: { description: "Repositories", schema: z.array(Repository) }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request }) => integrations.repos((await caller(request)).tenantId, params.integration_id),
  );
}
