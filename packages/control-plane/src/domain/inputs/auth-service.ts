import { z } from "zod";
import { Text } from "./primitives.js";

/*
 * Requests of the Auth Service (v2), with the hosted platform's field names
 * and defaults (docs/auth-service.md).
 */

export const PROVIDER_TYPES = ["microsoft", "salesforce", "slack"] as const;
export const TOKEN_ENDPOINT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;

const ProviderId = Text.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, {
  message: "must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit",
});
const Url = Text.min(1)
  .max(2000)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    message: "must be an http(s) URL",
  });
const Scope = Text.min(1)
  .max(500)
  .refine((value) => !/\s/.test(value), { message: "a scope holds no whitespace" });
const AgentId = Text.min(1).max(200);

export const ProviderCreate = z.strictObject({
  provider_id: ProviderId,
  name: Text.min(1).max(200),
  client_id: Text.min(1).max(2000),
  client_secret: Text.min(1).max(4000).nullable().optional(),
  auth_url: Url,
  token_url: Url,
  revocation_url: Url.nullable().optional().describe("RFC 7009 revocation endpoint: tokens are revoked there on delete"),
  uses_pkce: z.boolean().default(false),
  code_challenge_method: z.enum(["S256", "plain"]).nullable().default("S256"),
  provider_type: z.enum(PROVIDER_TYPES).nullable().optional(),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).default("client_secret_post"),
  shared_across_deployments: z
    .boolean()
    .default(false)
    .describe("Berth: every deployment of the workspace may get every user's tokens of this provider (docs/auth-service.md)"),
});

export const ProviderUpdate = z.strictObject({
  name: Text.min(1).max(200).nullable().optional(),
  client_id: Text.min(1).max(2000).nullable().optional(),
  client_secret: Text.min(1).max(4000).nullable().optional(),
  auth_url: Url.nullable().optional(),
  token_url: Url.nullable().optional(),
  revocation_url: Url.nullable().optional(),
  uses_pkce: z.boolean().nullable().optional(),
  code_challenge_method: z.enum(["S256", "plain"]).nullable().optional(),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).nullable().optional(),
  shared_across_deployments: z.boolean().nullable().optional(),
});

export const McpDiscover = z.strictObject({
  provider_id: ProviderId,
  name: Text.min(1).max(200),
  mcp_server_url: Url,
  shared_across_deployments: z
    .boolean()
    .default(false)
    .describe("Berth: every deployment of the workspace may get every user's tokens of this provider (docs/auth-service.md)"),
});

export const Authenticate = z.strictObject({
  provider: ProviderId.describe("The provider's provider_id"),
  scopes: z.array(Scope).max(100),
  user_id: Text.min(1).max(200).nullable().optional().describe("The user to act for (deployment and admin keys only)"),
  ls_user_id: Text.min(1).max(200).nullable().optional().describe("Accepted for compatibility; user_id is what counts"),
  agent_id: AgentId.nullable().optional(),
  force_new: z.boolean().default(false),
  token_id: z.uuid({ message: "must be a UUID" }).nullable().optional(),
  is_default: z.boolean().default(true),
});

export const CallbackBody = z.strictObject({ code: Text.min(1).max(4000), state: Text.min(1).max(500) });

export const TokenMetadataUpdate = z.strictObject({
  provider_account_label: Text.max(200).nullable().optional(),
  is_default: z.boolean().nullable().optional(),
});

export const ConnectionCreate = z.strictObject({
  oauth_token_id: z.uuid({ message: "must be a UUID" }),
  deployment_id: z
    .uuid({ message: "must be a UUID" })
    .nullable()
    .optional()
    .describe("Berth: the deployment whose runs get the token through this connection (docs/auth-service.md)"),
});

export const AgentIdParams = z.object({ agent_id: AgentId });
export const ProviderIdParams = z.object({ provider_id: ProviderId });

export type ProviderCreateInput = z.infer<typeof ProviderCreate>;
export type ProviderUpdateInput = z.infer<typeof ProviderUpdate>;
export type McpDiscoverInput = z.infer<typeof McpDiscover>;
export type AuthenticateInput = z.infer<typeof Authenticate>;
export type TokenMetadataInput = z.infer<typeof TokenMetadataUpdate>;
export type ConnectionCreateInput = z.infer<typeof ConnectionCreate>;
