/**
 * Column lists of the Auth Service's tables, shared by both backends, in the
 * key order of the records of ./auth-types.ts (see columns.ts): either backend
 * returns records with the same keys in the same order.
 */
import type {
  AgentConnectionRecord,
  AuthFlowRecord,
  OAuthProviderChange,
  OAuthProviderRecord,
  OAuthTokenChange,
  OAuthTokenRecord,
} from "./auth-types.js";

export const PROVIDER_COLUMNS = [
  "id",
  "tenant_id",
  "provider_id",
  "name",
  "client_id",
  "client_secret_ciphertext",
  "auth_url",
  "token_url",
  "revocation_url",
  "uses_pkce",
  "code_challenge_method",
  "provider_type",
  "mcp_server_url",
  "token_endpoint_auth_method",
  "is_dynamic_client",
  "created_at",
  "updated_at",
  "shared_across_deployments",
] as const satisfies readonly (keyof OAuthProviderRecord)[];

/** The provider columns an update may set (the names of OAuthProviderChange). */
export const PROVIDER_CHANGEABLE = [
  "name",
  "client_id",
  "client_secret_ciphertext",
  "auth_url",
  "token_url",
  "revocation_url",
  "uses_pkce",
  "code_challenge_method",
  "token_endpoint_auth_method",
  "shared_across_deployments",
] as const satisfies readonly (keyof OAuthProviderChange)[];

export const TOKEN_COLUMNS = [
  "id",
  "tenant_id",
  "provider_id",
  "user_id",
  "provider_account_label",
  "scopes",
  "access_token_ciphertext",
  "refresh_token_ciphertext",
  "token_type",
  "expires_at",
  "is_default",
  "created_at",
  "updated_at",
  "deployment_id",
] as const satisfies readonly (keyof OAuthTokenRecord)[];

/** The token columns an update may set (the names of OAuthTokenChange). */
export const TOKEN_CHANGEABLE = [
  "provider_account_label",
  "scopes",
  "access_token_ciphertext",
  "refresh_token_ciphertext",
  "token_type",
  "expires_at",
  "is_default",
] as const satisfies readonly (keyof OAuthTokenChange)[];

export const FLOW_COLUMNS = [
  "id",
  "tenant_id",
  "provider_id",
  "user_id",
  "agent_id",
  "scopes",
  "state_hash",
  "code_verifier_ciphertext",
  "redirect_uri",
  "is_default",
  "status",
  "token_id",
  "error",
  "expires_at",
  "created_at",
  "finished_at",
  "deployment_id",
] as const satisfies readonly (keyof AuthFlowRecord)[];

export const CONNECTION_COLUMNS = [
  "id",
  "tenant_id",
  "agent_id",
  "oauth_token_id",
  "created_by",
  "created_at",
  "deployment_id",
] as const satisfies readonly (keyof AgentConnectionRecord)[];

/** The lists above as SQL, for SELECT, INSERT and RETURNING. */
export const PROVIDER = PROVIDER_COLUMNS.join(", ");
export const TOKEN = TOKEN_COLUMNS.join(", ");
export const FLOW = FLOW_COLUMNS.join(", ");
export const CONNECTION = CONNECTION_COLUMNS.join(", ");
