import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { RegistryTokenService } from "../../services/registry-tokens.js";
import { Detail } from "../schemas/common.js";
import { DeploymentIdParams } from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

/** The official CLI's local-build path: a push token for the platform's registry, and the registry's token endpoint. */
export function registerRegistryRoutes({ app, catalog, caller }: RouteContext, registry: RegistryTokenService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/deployments/:deployment_id/push-token",
      summary: "A short-lived push credential for the platform's registry, scoped to this internal_image deployment's repository",
      tag: "Deployments (v2)",
      params: DeploymentIdParams,
      body: z.object({}).describe("No fields; an empty body is fine"),
      bodyOptional: true,
      responses: {
        200: { description: "`docker login -u berth -p <token>` then push under registry_url", schema: PushToken },
        400: {
          description: "Not an internal_image (internal_docker) deployment, or no registry is configured: `{detail}`",
          schema: Detail,
        },
        404: { description: "Not found", schema: Detail },
      },
    },
    async ({ params, request }) => registry.pushToken((await caller(request)).tenantId, params.deployment_id),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v1/registry/token",
      summary: "The registry's token endpoint (Docker token authentication): a push or pull token as Basic password",
      tag: "Registry",
      query: z.object({ service: z.string().optional(), scope: z.union([z.string(), z.array(z.string())]).optional() }),
      responses: {
        200: { description: "A registry token", schema: RegistryToken },
        401: { description: "No or an invalid push token", schema: Detail },
      },
    },
    async ({ query, request }) =>
      registry.exchange(
        request.headers.authorization,
        [query.scope ?? []].flat().flatMap((scope) => scope.split(" ")),
      ),
  );
}

const PushToken = z.object({ token: z.string(), registry_url: z.string() });
const RegistryToken = z.object({ token: z.string(), access_token: z.string(), expires_in: z.int(), issued_at: z.string() });
