import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { AgentConnectionService } from "../../services/agent-connections.js";
import type { AuthTokenService } from "../../services/auth-tokens.js";
import { authUserOf } from "../../services/auth-users.js";
import {
  AgentConnection,
  AgentIdParams,
  ConnectionCreate,
  ConnectionParams,
  Deleted,
  HasToken,
  ProviderQuery,
  RequiredProviderQuery,
  TokenIdParams,
  TokenMetadataUpdate,
  TokenSummary,
} from "../schemas/auth-service.js";
import { Detail, NOT_FOUND_RESPONSE } from "../schemas/common.js";
import type { RouteContext } from "./context.js";

const tag = "Auth Service (v2)";
const connectionsTag = "Agent Connections (v2)";

export function registerAuthTokenRoutes(
  { app, catalog, caller }: RouteContext,
  tokens: AuthTokenService,
  connections: AgentConnectionService,
): void {
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/tokens",
      summary: "The calling user's tokens (summaries: never the tokens themselves)",
      tag,
      query: ProviderQuery,
      responses: { 200: { description: "Tokens", schema: z.array(TokenSummary) } },
    },
    async ({ query, request }) => tokens.list(authUserOf(await caller(request)), query.provider_id),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v2/auth/tokens",
      summary: "Revoke and delete every token of the calling user for a provider",
      tag,
      query: RequiredProviderQuery,
      responses: { 200: { description: "How many", schema: Deleted }, ...NOT_FOUND_RESPONSE },
    },
    async ({ query, request }) => tokens.deleteAll(authUserOf(await caller(request)), query.provider_id),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/tokens/exists",
      summary: "Whether the calling user holds a token for a provider",
      tag,
      query: RequiredProviderQuery,
      responses: { 200: { description: "has_token", schema: HasToken } },
    },
    async ({ query, request }) => tokens.exists(authUserOf(await caller(request)), query.provider_id),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/tokens/workspace/slack/exists",
      summary: "Whether anyone in the workspace holds a Slack token",
      tag,
      responses: { 200: { description: "has_token", schema: HasToken } },
    },
    async ({ request }) => tokens.slackExists((await caller(request)).tenantId),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v2/auth/tokens/workspace/slack",
      summary: "Admin: revoke and delete every Slack token of the workspace",
      tag,
      responses: { 200: { description: "How many", schema: Deleted }, 403: { description: "Not an admin key", schema: Detail } },
    },
    async ({ request }) => tokens.deleteSlack(authUserOf(await caller(request))),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "PATCH",
      path: "/v2/auth/tokens/:token_id/metadata",
      summary: "Label a token, or make it the user's default for its provider (owner only)",
      tag,
      params: TokenIdParams,
      body: TokenMetadataUpdate,
      responses: { 200: { description: "The token", schema: TokenSummary }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, body, request }) => tokens.updateMetadata(authUserOf(await caller(request)), params.token_id, body),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v2/auth/tokens/:token_id",
      summary: "Revoke a token at its provider and delete it (owner only)",
      tag,
      params: TokenIdParams,
      responses: { 204: { description: "Deleted" }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request, reply }) => {
      await tokens.delete(authUserOf(await caller(request)), params.token_id);
      reply.code(204);
    },
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/agents/:agent_id/connections",
      summary: "The tokens bound to an agent",
      tag: connectionsTag,
      params: AgentIdParams,
      responses: { 200: { description: "Connections", schema: z.object({ data: z.array(AgentConnection) }) } },
    },
    async ({ params, request }) => connections.list((await caller(request)).tenantId, params.agent_id),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/auth/agents/:agent_id/connections",
      summary: "Bind one of the calling user's tokens to an agent: its runs get it with no user present",
      tag: connectionsTag,
      params: AgentIdParams,
      body: ConnectionCreate,
      responses: {
        201: { description: "The connection", schema: AgentConnection },
        409: { description: "Already bound", schema: Detail },
        ...NOT_FOUND_RESPONSE,
      },
    },
    async ({ params, body, request, reply }) => {
      const connection = await connections.create(authUserOf(await caller(request)), params.agent_id, body);
      reply.code(201);
      return connection;
    },
  );
  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v2/auth/agents/:agent_id/connections/:connection_id",
      summary: "Unbind a token from an agent",
      tag: connectionsTag,
      params: ConnectionParams,
      responses: { 204: { description: "Deleted" }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request, reply }) => {
      await connections.delete((await caller(request)).tenantId, params.agent_id, params.connection_id);
      reply.code(204);
    },
  );
}
