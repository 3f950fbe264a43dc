import { z } from "zod";
import { PROVIDER_TYPES, TOKEN_ENDPOINT_AUTH_METHODS } from "../../domain/inputs/auth-service.js";
import { Timestamp, Uuid } from "./common.js";

export {
  AgentIdParams,
  Authenticate,
  CallbackBody,
  ConnectionCreate,
  McpDiscover,
  ProviderCreate,
  ProviderIdParams,
  ProviderUpdate,
  TokenMetadataUpdate,
} from "../../domain/inputs/auth-service.js";

export const OAuthProvider = z.object({
  id: Uuid,
  organization_id: z.string().describe("The workspace"),
  provider_id: z.string(),
  name: z.string(),
  client_id: z.string(),
  auth_url: z.string(),
  token_url: z.string(),
  revocation_url: z.string().nullable().describe("Berth: where tokens are revoked on delete"),
  uses_pkce: z.boolean(),
  code_challenge_method: z.string().nullable(),
  provider_type: z.enum(PROVIDER_TYPES).nullable(),
  mcp_server_url: z.string().nullable(),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
  is_dynamic_client: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  shared_across_deployments: z.boolean().describe("Berth: every deployment of the workspace gets every user's tokens"),
});

export const AuthenticateResponse = z.object({
  status: z.enum(["completed", "pending", "connection_required", "token_expired"]),
  url: z.string().nullable().describe("Where the user gives consent (pending, token_expired)"),
  auth_id: z.string().nullable().describe("The consent flow, for GET /v2/auth/wait/{auth_id}"),
  token: z.string().nullable().describe("The access token (completed)"),
  user_id: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
});

export const WaitResponse = z.object({
  status: z.enum(["completed", "pending", "timeout", "not_found", "failed"]),
  token: z.string().nullable(),
  error: z.string().optional().describe("Berth: why the consent failed (status failed)"),
});

export const WaitParams = z.object({ auth_id: z.string().min(1).max(100) });
export const WaitQuery = z.object({ timeout: z.coerce.number().min(0).max(600).default(30) });

export const CallbackQuery = z.object({
  code: z.string().max(4000).optional(),
  state: z.string().max(500).optional(),
  error: z.string().max(500).optional(),
  error_description: z.string().max(2000).optional(),
});

export const SetupQuery = CallbackQuery.extend({
  setup_action: z.string().max(100).optional(),
  installation_id: z.string().max(100).optional(),
});

export const CallbackResponse = z.object({
  status: z.enum(["completed", "failed"]),
  auth_id: z.string(),
  error: z.string().nullable(),
});

export const TokenSummary = z.object({
  id: Uuid,
  provider_id: z.string(),
  provider_account_label: z.string().nullable(),
  scopes: z.array(z.string()),
  expires_at: Timestamp.nullable(),
  is_default: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const TokenIdParams = z.object({ token_id: Uuid });
export const ProviderQuery = z.object({ provider_id: z.string().min(1).max(100).optional() });
export const RequiredProviderQuery = z.object({ provider_id: z.string().min(1).max(100) });
export const HasToken = z.object({ has_token: z.boolean() });
export const Deleted = z.object({ deleted: z.int().describe("How many tokens were revoked and deleted") });

export const AgentConnection = z.object({
  id: Uuid,
  agent_id: z.string(),
  oauth_token_id: Uuid,
  provider_id: z.string(),
  provider_account_label: z.string().nullable(),
  scopes: z.array(z.string()),
  expires_at: Timestamp.nullable(),
  created_by: z.string(),
  created_at: Timestamp,
  deployment_id: Uuid.nullable().describe("Berth: the deployment whose runs get the token (null: workspace keys only)"),
});

export const ConnectionParams = z.object({ agent_id: z.string().min(1).max(200), connection_id: Uuid });
