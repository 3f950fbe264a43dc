import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { IntegrationService } from "../../services/integrations.js";
import { Detail, NOT_FOUND_RESPONSE } from "../schemas/common.js";
import {
  Integration,
  IntegrationCreate,
  IntegrationIdParams,
  IntegrationUpdate,
  IntegrationWithSecret,
  Repository,
} from "../schemas/integrations.js";
import type { RouteContext } from "./context.js";

const tag = "Integrations (v1)";
const BAD_REQUEST = { 400: { description: "Invalid for its kind: `{detail}`", schema: Detail } };
/** A key valid for every workspace is the platform's operator's: only it may point a local integration at a folder. */
const OPERATOR_ONLY = {
  403: { description: "A local integration's folder or repositories, from a key that is not the operator's", schema: Detail },
};

export async function registerIntegrationRoutes(
  { app, catalog, caller }: RouteContext,
  integrations: IntegrationService,
): Promise<void> {
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
      method: "POST",
      path: "/v1/integrations/repo_host",
      summary: "Connect a git host: its kind, where it is, credentials (never answered) and repositories",
      tag,
      body: IntegrationCreate,
      responses: {
        201: { description: "Created, with its webhook secret (shown once)", schema: IntegrationWithSecret },
        ...BAD_REQUEST,
        ...OPERATOR_ONLY,
      },
    },
    async ({ body, request, reply }) => {
      const { tenantId, allTenants } = await caller(request);
      const created = await integrations.create(tenantId, body, { operator: allTenants });
      reply.code(201);
      return created;
    },
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v1/integrations/repo_host/:integration_id",
      summary: "One integration",
      tag,
      params: IntegrationIdParams,
      responses: { 200: { description: "The integration", schema: Integration }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request }) => integrations.get((await caller(request)).tenantId, params.integration_id),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "PATCH",
      path: "/v1/integrations/repo_host/:integration_id",
      summary: "Rename it, replace its credentials or repositories, or rotate its webhook secret",
      tag,
      params: IntegrationIdParams,
      body: IntegrationUpdate,
      responses: {
        200: {
          description: "The integration (with the new webhook secret when rotated)",
          schema: IntegrationWithSecret.partial({ webhook_secret: true }),
        },
        ...BAD_REQUEST,
        ...OPERATOR_ONLY,
        ...NOT_FOUND_RESPONSE,
      },
    },
    async ({ params, body, request }) => {
      const { tenantId, allTenants } = await caller(request);
      return integrations.update(tenantId, params.integration_id, body, { operator: allTenants });
    },
  );
  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v1/integrations/repo_host/:integration_id",
      summary: "Disconnect a git host (409 while a deployment uses it)",
      tag,
      params: IntegrationIdParams,
      responses: {
        204: { description: "Deleted" },
        409: { description: "A live deployment uses it", schema: Detail },
        ...NOT_FOUND_RESPONSE,
      },
    },
    async ({ params, request, reply }) => {
      await integrations.delete((await caller(request)).tenantId, params.integration_id);
      reply.code(204);
    },
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v1/integrations/repo_host/:integration_id/repos",
      summary: "The repositories an integration may deploy: registered ones and what its host lists",
      tag,
      params: IntegrationIdParams,
      responses: { 200: { description: "Repositories", schema: z.array(Repository) }, ...BAD_REQUEST, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request }) => integrations.repos((await caller(request)).tenantId, params.integration_id),
  );

  // The push webhook reads its body as bytes: the signature is over them, not over a re-serialized JSON.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    defineRoute(
      scope,
      catalog,
      {
        method: "POST",
        path: "/v1/integrations/repo_host/:integration_id/webhook",
        summary:
          "A git host's push webhook, authenticated by its signature (GitHub X-Hub-Signature-256, Gitea/Forgejo X-Gitea-Signature, GitLab X-Gitlab-Token)",
        tag,
        params: IntegrationIdParams,
        responses: {
          202: {
            description: "Accepted: the revisions it made (builds run asynchronously)",
            schema: z.object({ detail: z.string(), revisions: z.array(z.string()) }),
          },
          401: { description: "Missing or wrong signature", schema: Detail },
          ...NOT_FOUND_RESPONSE,
        },
      },
      async ({ params, request, reply }) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const outcome = await integrations.receiveWebhook(params.integration_id, request.headers, body);
        reply.code(202);
        return outcome;
      },
    );
  });
}
