-- The control plane's tables: those of sqlite/migrations/001_control_plane.sql,
-- in PostgreSQL types.
--
-- JSON columns are JSONB (pg parses them back into values). Timestamps are
-- timestamptz; the pool reads them back as ISO strings, the shape SQLite
-- returns, and bigint as numbers.
-- Text that is sorted or compared is COLLATE "C": byte order, like SQLite's
-- BINARY collation, so sort orders (and ASCII-only lower()) match SQLite's
-- whatever the database's locale.

CREATE TABLE tenants (
  id         text COLLATE "C" PRIMARY KEY,
  name       text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id          text COLLATE "C" PRIMARY KEY,
  name        text NOT NULL,
  prefix      text NOT NULL,
  key_hash    text COLLATE "C" NOT NULL CONSTRAINT api_keys_key_hash UNIQUE,
  all_tenants boolean NOT NULL,
  tenant_ids  jsonb NOT NULL,
  created_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);

CREATE TABLE listeners (
  id             text COLLATE "C" PRIMARY KEY,
  tenant_id      text COLLATE "C" NOT NULL REFERENCES tenants (id),
  compute_type   text COLLATE "C" NOT NULL,
  compute_id     text COLLATE "C" NOT NULL,
  compute_config jsonb NOT NULL,
  version        text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  CONSTRAINT listeners_tenant_compute_id UNIQUE (tenant_id, compute_id)
);

CREATE TABLE integrations (
  id              text COLLATE "C" PRIMARY KEY,
  tenant_id       text COLLATE "C" NOT NULL REFERENCES tenants (id),
  name            text COLLATE "C" NOT NULL,
  provider        text COLLATE "C" NOT NULL,
  installation_id bigint NOT NULL,
  repos           jsonb NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE INDEX integrations_tenant ON integrations (tenant_id, created_at);

CREATE TABLE deployments (
  id                 text COLLATE "C" PRIMARY KEY,
  tenant_id          text COLLATE "C" NOT NULL REFERENCES tenants (id),
  name               text COLLATE "C" NOT NULL,
  source             text COLLATE "C" NOT NULL,
  source_config      jsonb NOT NULL,
  secret_references  jsonb,
  status             text COLLATE "C" NOT NULL,
  latest_revision_id text COLLATE "C",
  active_revision_id text COLLATE "C",
  image_version      text,
  listener_id        text COLLATE "C" REFERENCES listeners (id),
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  deleted_at         timestamptz
);
-- Names are unique among a workspace's live deployments; a deleted one's name is free again.
CREATE UNIQUE INDEX deployments_live_name ON deployments (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX deployments_tenant_created ON deployments (tenant_id, created_at);
-- Whether a listener is in use (listeners.delete).
CREATE INDEX deployments_listener ON deployments (listener_id) WHERE listener_id IS NOT NULL;

CREATE TABLE revisions (
  id                     text COLLATE "C" PRIMARY KEY,
  deployment_id          text COLLATE "C" NOT NULL REFERENCES deployments (id),
  tenant_id              text COLLATE "C" NOT NULL,
  number                 integer NOT NULL,
  status                 text COLLATE "C" NOT NULL,
  status_message         text NOT NULL,
  source                 text COLLATE "C" NOT NULL,
  source_revision_config jsonb NOT NULL,
  source_config          jsonb NOT NULL,
  secret_references      jsonb,
  secrets_ciphertext     text NOT NULL,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  CONSTRAINT revisions_deployment_number UNIQUE (deployment_id, number)
);
CREATE INDEX revisions_status ON revisions (status);

CREATE TABLE uploads (
  upload_id     text COLLATE "C" PRIMARY KEY,
  object_path   text COLLATE "C" NOT NULL CONSTRAINT uploads_object_path UNIQUE,
  deployment_id text COLLATE "C" NOT NULL REFERENCES deployments (id),
  tenant_id     text COLLATE "C" NOT NULL,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  uploaded_at   timestamptz,
  size_bytes    bigint,
  sha256        text
);
CREATE INDEX uploads_deployment ON uploads (deployment_id);

CREATE TABLE tracing_projects (
  id            text COLLATE "C" PRIMARY KEY,
  tenant_id     text COLLATE "C" NOT NULL REFERENCES tenants (id),
  name          text COLLATE "C" NOT NULL,
  deployment_id text COLLATE "C",
  created_at    timestamptz NOT NULL,
  CONSTRAINT tracing_projects_tenant_name UNIQUE (tenant_id, name)
);
CREATE INDEX tracing_projects_deployment ON tracing_projects (deployment_id);
