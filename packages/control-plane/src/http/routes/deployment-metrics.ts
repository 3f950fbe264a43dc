import { defineRoute } from "@berth/service-kit";
import type { DeploymentMetricsService } from "../../services/deployment-metrics.js";
import { Detail } from "../schemas/common.js";
import { DeploymentMetrics, DeploymentMetricsQuery } from "../schemas/deployment-metrics.js";
import { DeploymentIdParams } from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

/** A deployment's metric series over the last hour or day, read from the samples its listener sends. */
export function registerDeploymentMetricsRoutes({ app, catalog, caller }: RouteContext, metrics: DeploymentMetricsService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/deployments/:deployment_id/metrics",
      summary: "A deployment's runs per minute, error rate, run latency, queue depth and replicas' CPU and memory",
      tag: "Deployments (v2)",
      params: DeploymentIdParams,
      query: DeploymentMetricsQuery,
      responses: {
        200: { description: "One value per step of the window, oldest first", schema: DeploymentMetrics },
        401: { description: "Missing or invalid API key", schema: Detail },
        404: { description: "Not found", schema: Detail },
      },
    },
    async ({ params, query, request }) => metrics.read((await caller(request)).tenantId, params.deployment_id, query.window),
  );
}
