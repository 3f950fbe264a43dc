import type { WebhookService } from "../../services/webhooks.js";
import { RunParamsSchema } from "../schemas/runs.js";
import { WebhookDeliverySchema } from "../schemas/webhooks.js";
import { accessOf } from "../auth/access.js";
import { type RouteDef, route } from "./route-table.js";

/** Berth's own route (the official server has none): what became of a run's webhook. */
export function webhookRoutes(webhooks: WebhookService): RouteDef[] {
  return [
    route(
      {
        method: "GET",
        path: "/threads/:thread_id/runs/:run_id/webhook",
        summary: "Read the delivery of a run's webhook: status, attempts, last answer",
        params: RunParamsSchema,
        responses: { 200: { description: "The delivery", schema: WebhookDeliverySchema } },
      },
      ({ params, request }) => webhooks.get(params.thread_id, params.run_id, accessOf(request)),
    ),
  ];
}
