/**
 * Records and storage interface of the Auth Service (OAuth providers, consent
 * flows, users' tokens and agent connections): sqlite/auth.ts and
 * postgres/auth.ts. Every secret is stored encrypted (domain/secret-box.ts);
 * the stores never see plaintext.
 */

export type TokenEndpointAuthMethod = "none" | "client_secret_basic" | "client_secret_post";
export type ProviderType = "microsoft" | "salesforce" | "slack";

export interface OAuthProviderRecord {
  /** uuid. */
  id: string;
  tenant_id: string;
  /** The workspace's name for it (unique per workspace), used in routes. */
  provider_id: string;
  name: string;
  client_id: string;
  client_secret_ciphertext: string | null;
  auth_url: string;
  token_url: string;
  /** RFC 7009 revocation endpoint, when known (discovered, or set by an admin). */
  revocation_url: string | null;
  uses_pkce: boolean;
  code_challenge_method: string | null;
  provider_type: ProviderType | null;
  mcp_server_url: string | null;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  is_dynamic_client: boolean;
  created_at: string;
  updated_at: string;
  /** Every deployment of the workspace may get every user's tokens of it; else a deployment gets those it was given. */
  shared_across_deployments: boolean;
}

export type OAuthProviderChange = Partial<
  Pick<
    OAuthProviderRecord,
    | "name"
    | "client_id"
    | "client_secret_ciphertext"
    | "auth_url"
    | "token_url"
    | "revocation_url"
    | "uses_pkce"
    | "code_challenge_method"
    | "token_endpoint_auth_method"
    | "shared_across_deployments"
  >
>;

export interface OAuthTokenRecord {
  /** uuid. */
  id: string;
  tenant_id: string;
  /** The provider's provider_id (not its uuid). */
  provider_id: string;
  /** The user of the workspace the token belongs to (docs/auth-service.md). */
  user_id: string;
  provider_account_label: string | null;
  scopes: string[];
  access_token_ciphertext: string;
  refresh_token_ciphertext: string | null;
  token_type: string | null;
  /** null: the provider gave no lifetime. */
  expires_at: string | null;
  /** The user's token for the provider when a request names none; at most one per (tenant, user, provider). */
  is_default: boolean;
  created_at: string;
  updated_at: string;
  /** The deployment whose consent stored it (its runs may use it); null when a workspace or admin key's did. */
  deployment_id: string | null;
}

export type OAuthTokenChange = Partial<
  Pick<
    OAuthTokenRecord,
    | "provider_account_label"
    | "scopes"
    | "access_token_ciphertext"
    | "refresh_token_ciphertext"
    | "token_type"
    | "expires_at"
    | "is_default"
  >
>;

export type AuthFlowStatus = "pending" | "completed" | "failed";

/** One consent in progress: created by authenticate, finished once by the provider's redirect. */
export interface AuthFlowRecord {
  /** uuid: the auth_id; the `state` sent to the provider starts with it. */
  id: string;
  tenant_id: string;
  provider_id: string;
  user_id: string;
  agent_id: string | null;
  scopes: string[];
  /** SHA-256 (hex) of the whole `state`: the state itself is never stored. */
  state_hash: string;
  /** PKCE verifier, encrypted; null without PKCE. */
  code_verifier_ciphertext: string | null;
  redirect_uri: string;
  is_default: boolean;
  status: AuthFlowStatus;
  /** The token stored when it completed. */
  token_id: string | null;
  /** Why it failed (the provider's error, or the exchange's). */
  error: string | null;
  /** After this the state is refused. */
  expires_at: string;
  created_at: string;
  finished_at: string | null;
  /** The deployment whose Auth Service key started it; null for a workspace or admin key. */
  deployment_id: string | null;
}

export interface AgentConnectionRecord {
  /** uuid. */
  id: string;
  tenant_id: string;
  agent_id: string;
  oauth_token_id: string;
  /** The user who bound the token. */
  created_by: string;
  created_at: string;
  /** The one deployment whose runs get the token through this connection; null: workspace keys only (docs/auth-service.md). */
  deployment_id: string | null;
}

export interface AuthStore {
  /** ConflictError when the workspace has a provider with that provider_id. */
  createProvider(provider: OAuthProviderRecord): Promise<void>;
  getProvider(tenantId: string, providerId: string): Promise<OAuthProviderRecord | undefined>;
  /** Oldest first. */
  listProviders(tenantId: string): Promise<OAuthProviderRecord[]>;
  updateProvider(
    tenantId: string,
    providerId: string,
    change: OAuthProviderChange,
    now: string,
  ): Promise<OAuthProviderRecord | undefined>;
  /** Deletes the provider with its tokens, their agent connections, and its flows; false when no such provider. */
  deleteProvider(tenantId: string, providerId: string): Promise<boolean>;

  createFlow(flow: AuthFlowRecord): Promise<void>;
  /** By id alone: the provider's redirect carries no workspace. */
  getFlow(id: string): Promise<AuthFlowRecord | undefined>;
  /**
   * Moves a pending flow to completed or failed, once, atomically; undefined
   * when it is not pending any more (a replayed state) or does not exist.
   */
  finishFlow(
    id: string,
    outcome: { status: "completed" | "failed"; token_id?: string | null; error?: string | null },
    now: string,
  ): Promise<AuthFlowRecord | undefined>;
  /** Deletes flows that expired before `before`; returns how many. */
  deleteExpiredFlows(before: string): Promise<number>;

  /** Inserts the token; when it is_default, the user's other tokens for the provider stop being default, in the same transaction. */
  createToken(token: OAuthTokenRecord): Promise<void>;
  getToken(tenantId: string, id: string): Promise<OAuthTokenRecord | undefined>;
  /** The user's tokens, optionally for one provider, oldest first. */
  listTokens(tenantId: string, userId: string, providerId?: string): Promise<OAuthTokenRecord[]>;
  /** Every user's tokens for a provider (workspace-wide operations), oldest first. */
  listProviderTokens(tenantId: string, providerId: string): Promise<OAuthTokenRecord[]>;
  /** Setting is_default true unmarks the user's other tokens for the provider, in the same transaction. */
  updateToken(tenantId: string, id: string, change: OAuthTokenChange, now: string): Promise<OAuthTokenRecord | undefined>;
  /** Deletes the token and its agent connections; false when no such token. */
  deleteToken(tenantId: string, id: string): Promise<boolean>;

  /** ConflictError when the agent is already connected to that token. */
  createConnection(connection: AgentConnectionRecord): Promise<void>;
  /** Oldest first. */
  listConnections(tenantId: string, agentId: string): Promise<AgentConnectionRecord[]>;
  deleteConnection(tenantId: string, agentId: string, id: string): Promise<boolean>;
}
