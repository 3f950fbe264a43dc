import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { RunWebhookService } from "../../services/run-webhooks.js";
import { NOT_FOUND_RESPONSE } from "../schemas/common.js";
import { DeploymentIdParams } from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

const RunWebhookSigning = z.object({
  deployment_id: z.string(),
  webhook_secret: z.string().describe("The deployment's BERTH_WEBHOOK_SECRET: its run webhooks' HMAC-SHA256 key"),
  signature_header: z.string(),
});

export function registerRunWebhookRoutes({ app, catalog, caller }: RouteContext, runWebhooks: RunWebhookService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/deployments/:deployment_id/webhook-secret",
      summary: "The secret the deployment's run webhooks are signed with (X-Berth-Signature), set by the platform",
      tag: "Deployments (v2)",
      params: DeploymentIdParams,
      responses: { 200: { description: "The secret", schema: RunWebhookSigning }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request }) => runWebhooks.signingOf((await caller(request)).tenantId, params.deployment_id),
  );
}
