-- The tables of sqlite/migrations/006_auth_service.sql, in PostgreSQL types
-- (see 001_control_plane.sql): ids and compared text COLLATE "C", scopes as
-- jsonb (as api_keys.tenant_ids), booleans, timestamptz. Tokens and flows name
-- their provider by (tenant_id, provider_id), which an update never changes,
-- and go with it (ON DELETE CASCADE); a token's agent connections go with it.

CREATE TABLE oauth_providers (
  id                         text COLLATE "C" PRIMARY KEY,
  tenant_id                  text COLLATE "C" NOT NULL REFERENCES tenants (id),
  provider_id                text COLLATE "C" NOT NULL,
  name                       text NOT NULL,
  client_id                  text NOT NULL,
  client_secret_ciphertext   text,
  auth_url                   text NOT NULL,
  token_url                  text NOT NULL,
  revocation_url             text,
  uses_pkce                  boolean NOT NULL,
  code_challenge_method      text COLLATE "C",
  provider_type              text COLLATE "C",
  mcp_server_url             text,
  token_endpoint_auth_method text COLLATE "C" NOT NULL,
  is_dynamic_client          boolean NOT NULL,
  created_at                 timestamptz NOT NULL,
  updated_at                 timestamptz NOT NULL,
  CONSTRAINT oauth_providers_tenant_provider_id UNIQUE (tenant_id, provider_id)
);

CREATE TABLE oauth_tokens (
  id                       text COLLATE "C" PRIMARY KEY,
  tenant_id                text COLLATE "C" NOT NULL,
  provider_id              text COLLATE "C" NOT NULL,
  user_id                  text COLLATE "C" NOT NULL,
  provider_account_label   text,
  scopes                   jsonb NOT NULL,
  access_token_ciphertext  text NOT NULL,
  refresh_token_ciphertext text,
  token_type               text,
  expires_at               timestamptz,
  is_default               boolean NOT NULL,
  created_at               timestamptz NOT NULL,
  updated_at               timestamptz NOT NULL,
  -- What agent_connections references: a connection stays in its token's workspace.
  CONSTRAINT oauth_tokens_tenant_id UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, provider_id) REFERENCES oauth_providers (tenant_id, provider_id) ON DELETE CASCADE
);
CREATE INDEX oauth_tokens_user ON oauth_tokens (tenant_id, user_id, provider_id);
CREATE INDEX oauth_tokens_provider ON oauth_tokens (tenant_id, provider_id);
-- At most one default token per user and provider (createToken/updateToken
-- unmark the previous one first, under a per-user-and-provider lock).
CREATE UNIQUE INDEX oauth_tokens_default ON oauth_tokens (tenant_id, user_id, provider_id) WHERE is_default;

-- token_id has no foreign key: a finished flow keeps naming the token it
-- stored until it expires and is deleted, even when the token is gone.
CREATE TABLE auth_flows (
  id                       text COLLATE "C" PRIMARY KEY,
  tenant_id                text COLLATE "C" NOT NULL,
  provider_id              text COLLATE "C" NOT NULL,
  user_id                  text COLLATE "C" NOT NULL,
  agent_id                 text COLLATE "C",
  scopes                   jsonb NOT NULL,
  state_hash               text COLLATE "C" NOT NULL,
  code_verifier_ciphertext text,
  redirect_uri             text NOT NULL,
  is_default               boolean NOT NULL,
  status                   text COLLATE "C" NOT NULL,
  token_id                 text COLLATE "C",
  error                    text,
  expires_at               timestamptz NOT NULL,
  created_at               timestamptz NOT NULL,
  finished_at              timestamptz,
  FOREIGN KEY (tenant_id, provider_id) REFERENCES oauth_providers (tenant_id, provider_id) ON DELETE CASCADE
);
CREATE INDEX auth_flows_expires ON auth_flows (expires_at);
CREATE INDEX auth_flows_provider ON auth_flows (tenant_id, provider_id);

CREATE TABLE agent_connections (
  id             text COLLATE "C" PRIMARY KEY,
  tenant_id      text COLLATE "C" NOT NULL,
  agent_id       text COLLATE "C" NOT NULL,
  oauth_token_id text COLLATE "C" NOT NULL,
  created_by     text COLLATE "C" NOT NULL,
  created_at     timestamptz NOT NULL,
  CONSTRAINT agent_connections_tenant_agent_token UNIQUE (tenant_id, agent_id, oauth_token_id),
  FOREIGN KEY (tenant_id, oauth_token_id) REFERENCES oauth_tokens (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX agent_connections_token ON agent_connections (tenant_id, oauth_token_id);
