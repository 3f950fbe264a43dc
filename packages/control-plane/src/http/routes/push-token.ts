import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { DeploymentService } from "../../services/deployments.js";
import { Detail } from "../schemas/common.js";
import { DeploymentIdParams } from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

/** The official CLI's local-build path: a registry push token. Always refused for now (domain/push-token.ts). */
export function registerPushTokenRoute({ app, catalog, caller }: RouteContext, deployments: DeploymentService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/deployments/:deployment_id/push-token",
      summary: "A registry push token for a locally built image: not available yet (needs a registry and container compute)",
      tag: "Deployments (v2)",
      params: DeploymentIdParams,
      body: z.object({}).describe("No fields; an empty body is fine"),
      bodyOptional: true,
      responses: {
        400: {
          description: "Not an internal_image (internal_docker) deployment, or push tokens are not available: `{detail}`",
          schema: Detail,
        },
        404: { description: "Not found", schema: Detail },
      },
    },
    async ({ params, request }) => deployments.pushToken((await caller(request)).tenantId, params.deployment_id),
  );
}
