CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  all_tenants INTEGER NOT NULL,
  tenant_ids TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);

CREATE TABLE listeners (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  compute_type TEXT NOT NULL,
  compute_id TEXT NOT NULL,
  compute_config TEXT NOT NULL,
  version TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant_id, compute_id)
);

CREATE TABLE integrations (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL,
  provider TEXT NOT NULL,
  installation_id INTEGER NOT NULL,
  repos TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE deployments (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL,
  source TEXT NOT NULL,
  source_config TEXT NOT NULL,
  secret_references TEXT,
  status TEXT NOT NULL,
  latest_revision_id TEXT,
  active_revision_id TEXT,
  image_version TEXT,
  listener_id TEXT REFERENCES listeners(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
-- Names are unique among a workspace's live deployments; a deleted one's name is free again.
CREATE UNIQUE INDEX deployments_live_name ON deployments (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX deployments_tenant_created ON deployments (tenant_id, created_at);

CREATE TABLE revisions (
  id TEXT PRIMARY KEY,
  deployment_id TEXT NOT NULL REFERENCES deployments(id),
  tenant_id TEXT NOT NULL,
  number INTEGER NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT NOT NULL,
  source TEXT NOT NULL,
  source_revision_config TEXT NOT NULL,
  source_config TEXT NOT NULL,
  secret_references TEXT,
  secrets_ciphertext TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (deployment_id, number)
);
CREATE INDEX revisions_status ON revisions (status);

CREATE TABLE uploads (
  upload_id TEXT PRIMARY KEY,
  object_path TEXT NOT NULL UNIQUE,
  deployment_id TEXT NOT NULL REFERENCES deployments(id),
  tenant_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  uploaded_at TEXT,
  size_bytes INTEGER,
  sha256 TEXT
);

CREATE TABLE tracing_projects (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL,
  deployment_id TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (tenant_id, name)
);
