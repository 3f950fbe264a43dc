import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { AuthProviderService } from "../../services/auth-providers.js";
import { McpDiscover, OAuthProvider, ProviderCreate, ProviderIdParams, ProviderUpdate } from "../schemas/auth-service.js";
import { Detail, NOT_FOUND_RESPONSE } from "../schemas/common.js";
import type { RouteContext } from "./context.js";

const tag = "Auth Service (v2)";
const BAD_REQUEST = { 400: { description: "Refused: `{detail}`", schema: Detail } };
const CONFLICT = { 409: { description: "The workspace has a provider with that provider_id", schema: Detail } };

export function registerAuthProviderRoutes(
  { app, catalog, caller }: RouteContext,
  providers: AuthProviderService,
  /** The base of the Auth Service's redirect URIs (configuration, never a request header). */
  ownUrl: () => string,
): void {
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/providers",
      summary: "The workspace's OAuth providers",
      tag,
      responses: { 200: { description: "Providers", schema: z.array(OAuthProvider) } },
    },
    async ({ request }) => providers.list((await caller(request)).tenantId),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/auth/providers",
      summary: "Configure an OAuth provider (its client secret is stored encrypted and never answered)",
      tag,
      body: ProviderCreate,
      responses: { 200: { description: "The provider", schema: OAuthProvider }, ...BAD_REQUEST, ...CONFLICT },
    },
    async ({ body, request }) => providers.create((await caller(request)).tenantId, body),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/auth/providers/mcp-discover",
      summary: "Discover an MCP server's OAuth metadata and register a client there dynamically",
      tag,
      body: McpDiscover,
      responses: {
        200: { description: "The provider (is_dynamic_client when registered here)", schema: OAuthProvider },
        ...BAD_REQUEST,
        ...CONFLICT,
      },
    },
    async ({ body, request }) => providers.discoverMcp((await caller(request)).tenantId, body, ownUrl()),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/providers/:provider_id",
      summary: "One provider",
      tag,
      params: ProviderIdParams,
      responses: { 200: { description: "The provider", schema: OAuthProvider }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request }) => providers.get((await caller(request)).tenantId, params.provider_id),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "PATCH",
      path: "/v2/auth/providers/:provider_id",
      summary: "Change a provider (null leaves a field as it is; a null client_secret or revocation_url clears it)",
      tag,
      params: ProviderIdParams,
      body: ProviderUpdate,
      responses: { 200: { description: "The provider", schema: OAuthProvider }, ...BAD_REQUEST, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, body, request }) => providers.update((await caller(request)).tenantId, params.provider_id, body),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v2/auth/providers/:provider_id",
      summary: "Delete a provider with its users' tokens and their agent connections",
      tag,
      params: ProviderIdParams,
      responses: { 200: { description: "Deleted", schema: Detail }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request }) => {
      await providers.delete((await caller(request)).tenantId, params.provider_id);
      return { detail: `Provider ${params.provider_id} deleted` };
    },
  );
}
