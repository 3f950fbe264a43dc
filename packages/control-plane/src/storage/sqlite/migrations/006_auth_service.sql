-- The Auth Service (storage/auth-types.ts): a workspace's OAuth providers, its
-- users' tokens for them, consent flows in progress, and the agents bound to
-- tokens. Secrets are stored encrypted (*_ciphertext); scopes as JSON arrays.
-- Tokens and flows name their provider by (tenant_id, provider_id), which an
-- update never changes, and go with it (ON DELETE CASCADE); a token's agent
-- connections go with the token.

CREATE TABLE oauth_providers (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  provider_id TEXT NOT NULL,
  name TEXT NOT NULL,
  client_id TEXT NOT NULL,
  client_secret_ciphertext TEXT,
  auth_url TEXT NOT NULL,
  token_url TEXT NOT NULL,
  revocation_url TEXT,
  uses_pkce INTEGER NOT NULL,
  code_challenge_method TEXT,
  provider_type TEXT,
  mcp_server_url TEXT,
  token_endpoint_auth_method TEXT NOT NULL,
  is_dynamic_client INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant_id, provider_id)
);

CREATE TABLE oauth_tokens (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  provider_account_label TEXT,
  scopes TEXT NOT NULL,
  access_token_ciphertext TEXT NOT NULL,
  refresh_token_ciphertext TEXT,
  token_type TEXT,
  expires_at TEXT,
  is_default INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- What agent_connections references: a connection stays in its token's workspace.
  UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, provider_id) REFERENCES oauth_providers (tenant_id, provider_id) ON DELETE CASCADE
);
CREATE INDEX oauth_tokens_user ON oauth_tokens (tenant_id, user_id, provider_id);
CREATE INDEX oauth_tokens_provider ON oauth_tokens (tenant_id, provider_id);
-- At most one default token per user and provider (createToken/updateToken unmark the previous one first).
CREATE UNIQUE INDEX oauth_tokens_default ON oauth_tokens (tenant_id, user_id, provider_id) WHERE is_default = 1;

-- token_id has no foreign key: a finished flow keeps naming the token it
-- stored until it expires and is deleted, even when the token is gone.
CREATE TABLE auth_flows (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  agent_id TEXT,
  scopes TEXT NOT NULL,
  state_hash TEXT NOT NULL,
  code_verifier_ciphertext TEXT,
  redirect_uri TEXT NOT NULL,
  is_default INTEGER NOT NULL,
  status TEXT NOT NULL,
  token_id TEXT,
  error TEXT,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  FOREIGN KEY (tenant_id, provider_id) REFERENCES oauth_providers (tenant_id, provider_id) ON DELETE CASCADE
);
CREATE INDEX auth_flows_expires ON auth_flows (expires_at);
CREATE INDEX auth_flows_provider ON auth_flows (tenant_id, provider_id);

CREATE TABLE agent_connections (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  oauth_token_id TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (tenant_id, agent_id, oauth_token_id),
  FOREIGN KEY (tenant_id, oauth_token_id) REFERENCES oauth_tokens (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX agent_connections_token ON agent_connections (tenant_id, oauth_token_id);
