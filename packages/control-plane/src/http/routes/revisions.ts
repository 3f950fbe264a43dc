import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { DeploymentService } from "../../services/deployments.js";
import type { RevisionService } from "../../services/revisions.js";
import { Detail } from "../schemas/common.js";
import {
  Deployment,
  DeploymentIdParams,
  Revision,
  RevisionEvent,
  RevisionIdParams,
  RevisionListQuery,
  RevisionPage,
  RevisionStatus,
} from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

const tag = "Deployments (v2)";

export function registerRevisionRoutes(
  { app, catalog, caller }: RouteContext,
  revisions: RevisionService,
  deployments: DeploymentService,
): void {
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
      responses: {
        200: { description: "A page, and the offset of the next one", schema: RevisionPage },
        404: { description: "Not found", schema: Detail },
      },
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
      summary: "Get a revision (with wait_seconds: once it is final, or after that long)",
      tag,
      params: RevisionIdParams,
      query: z.object({
        wait_seconds: z.coerce
          .number()
          .min(0)
          .max(300)
          .default(0)
          .describe("Long poll: answer when the revision is final, or after this many seconds"),
        while_status: RevisionStatus.optional().describe(
          "With wait_seconds: answer as soon as the status is another than this one",
        ),
      }),
      responses: { 200: { description: "The revision", schema: Revision }, 404: { description: "Not found", schema: Detail } },
    },
    async ({ params, query, request }) =>
      revisions.wait(
        (await caller(request)).tenantId,
        params.deployment_id,
        params.revision_id,
        query.wait_seconds,
        query.while_status,
      ),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/deployments/:deployment_id/revisions/:revision_id/events",
      summary: "A revision's timeline: every status it went through, with the reason, oldest first",
      tag,
      params: RevisionIdParams,
      responses: {
        200: { description: "The timeline", schema: z.object({ resources: z.array(RevisionEvent), offset: z.int() }) },
        404: { description: "Not found", schema: Detail },
      },
    },
    async ({ params, request }) => revisions.events((await caller(request)).tenantId, params.deployment_id, params.revision_id),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/deployments/:deployment_id/revisions/:revision_id/interrupt",
      summary: "Stop a revision in progress (it ends INTERRUPTED)",
      tag,
      params: RevisionIdParams,
      body: z.object({}),
      bodyOptional: true,
      responses: {
        200: { description: "The interrupted revision", schema: Revision },
        404: { description: "Not found", schema: Detail },
        409: { description: "The revision is final already", schema: Detail },
      },
    },
    async ({ params, request }) =>
      revisions.interrupt((await caller(request)).tenantId, params.deployment_id, params.revision_id),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/deployments/:deployment_id/revisions",
      summary: "A new revision with the latest one's configuration and secrets, built or pulled and deployed again",
      tag,
      params: DeploymentIdParams,
      body: z.object({}).describe("No fields; an empty body is fine"),
      bodyOptional: true,
      responses: {
        201: { description: "The new revision", schema: Revision },
        404: { description: "Not found", schema: Detail },
      },
    },
    async ({ params, request, reply }) =>
      reply.status(201).send(await deployments.createRevision((await caller(request)).tenantId, params.deployment_id)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/deployments/:deployment_id/revisions/:revision_id/redeploy",
      summary: "Rollback: a new revision deploying this deployed revision's built artifact again, without a build",
      tag,
      params: RevisionIdParams,
      body: z.object({}),
      bodyOptional: true,
      responses: {
        200: { description: "The deployment; latest_revision_id is the new revision", schema: Deployment },
        400: { description: "The revision was never deployed", schema: Detail },
        404: { description: "Not found", schema: Detail },
      },
    },
    async ({ params, request }) =>
      deployments.redeploy((await caller(request)).tenantId, params.deployment_id, params.revision_id),
  );
}
