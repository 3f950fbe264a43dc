-- The Auth Service's deployment scope (docs/auth-service.md, "Who the user
-- is"): a deployment's key gets the tokens its own consents stored and the
-- agent connections made for it, unless the provider is shared across the
-- workspace's deployments. NULL deployment_id: a workspace or admin key's.

ALTER TABLE oauth_providers ADD COLUMN shared_across_deployments INTEGER NOT NULL DEFAULT 0;
ALTER TABLE oauth_tokens ADD COLUMN deployment_id TEXT;
ALTER TABLE auth_flows ADD COLUMN deployment_id TEXT;
ALTER TABLE agent_connections ADD COLUMN deployment_id TEXT;
