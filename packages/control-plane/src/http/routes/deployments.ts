import { defineRoute, RequestValidationError } from "@berth/service-kit";
import type { DeploymentService } from "../../services/deployments.js";
import { Detail } from "../schemas/common.js";
import {
  BulkDeleteBody,
  BulkDeleteQuery,
  BulkDeleteResult,
  DeleteQuery,
  Deployment,
  DeploymentCreateRequest,
  DeploymentIdParams,
  DeploymentListQuery,
  DeploymentPage,
  DeploymentPatchRequest,
} from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

const tag = "Deployments (v2)";
const errors = {
  400: { description: "A rule of the API is broken: `{detail}`", schema: Detail },
  401: { description: "Missing or invalid API key", schema: Detail },
  403: { description: "Revoked key, or a workspace the key cannot act in", schema: Detail },
};

export function registerDeploymentRoutes({ app, catalog, caller }: RouteContext, deployments: DeploymentService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/deployments",
      summary: "Create a deployment (and its first revision and tracing project)",
      tag,
      body: DeploymentCreateRequest,
      responses: { 201: { description: "The deployment", schema: Deployment }, ...errors, 409: { description: "Name taken" } },
    },
    async ({ body, request, reply }) => {
      const { tenantId } = await caller(request);
      return reply.status(201).send(await deployments.create(tenantId, body));
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/deployments",
      summary: "List deployments, newest first",
      tag,
      query: DeploymentListQuery,
      responses: { 200: { description: "A page, and the offset of the next one", schema: DeploymentPage }, ...errors },
    },
    async ({ query, request }) => {
      const { tenantId } = await caller(request);
      const { status, ...rest } = query;
      return deployments.list(tenantId, { ...rest, statuses: status });
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v2/deployments",
      summary: "Delete several deployments (deployment_ids as a CSV or repeated query parameter, or a JSON body)",
      tag,
      query: BulkDeleteQuery,
      body: BulkDeleteBody.partial(),
      bodyOptional: true,
      responses: {
        200: { description: "All deleted", schema: BulkDeleteResult },
        207: { description: "Only some existed: per-id results", schema: BulkDeleteResult },
        404: { description: "None existed", schema: BulkDeleteResult },
        ...errors,
      },
    },
    async ({ query, body, request, reply }) => {
      const { tenantId } = await caller(request);
      const ids = query.deployment_ids ?? body.deployment_ids;
      if (!ids) {
        throw new RequestValidationError([{ loc: ["query", "deployment_ids"], msg: "Field required", type: "missing" }]);
      }
      const { deleted, missing } = await deployments.bulkDelete(tenantId, ids);
      const gone = new Set(deleted);
      const results = [...new Set(ids)].map((id) =>
        gone.has(id)
          ? { deployment_id: id, status: 204, detail: "Deleted" }
          : { deployment_id: id, status: 404, detail: `Deployment ${id} not found` },
      );
      const status = missing.length === 0 ? 200 : deleted.length === 0 ? 404 : 207;
      return reply.status(status).send({ results, ...(status === 404 ? { detail: "None of the deployments exist" } : {}) });
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/deployments/:deployment_id",
      summary: "Get a deployment",
      tag,
      params: DeploymentIdParams,
      responses: { 200: { description: "The deployment", schema: Deployment }, ...errors, 404: { description: "Not found" } },
    },
    async ({ params, request }) => deployments.get((await caller(request)).tenantId, params.deployment_id),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "PATCH",
      path: "/v2/deployments/:deployment_id",
      summary: "Update a deployment; non-null source_revision_config fields, secrets or resource_spec make a new revision",
      tag,
      params: DeploymentIdParams,
      body: DeploymentPatchRequest,
      responses: { 200: { description: "The deployment", schema: Deployment }, ...errors, 404: { description: "Not found" } },
    },
    async ({ params, body, request }) => deployments.patch((await caller(request)).tenantId, params.deployment_id, body),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v2/deployments/:deployment_id",
      summary: "Delete a deployment",
      tag,
      params: DeploymentIdParams,
      query: DeleteQuery,
      responses: { 204: { description: "Deleted" }, ...errors, 404: { description: "Not found" } },
    },
    async ({ params, query, request, reply }) => {
      const { tenantId } = await caller(request);
      await deployments.delete(tenantId, params.deployment_id, query.delete_tracing_project ?? false);
      return reply.status(204).send();
    },
  );
}
