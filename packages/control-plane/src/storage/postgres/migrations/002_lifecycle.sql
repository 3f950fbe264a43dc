-- What running revisions needs: timelines, logs, redeploys, default listeners.
-- The tables of sqlite/migrations/002_lifecycle.sql, in PostgreSQL types (see
-- 001_control_plane.sql). The ids of events and log lines are bigint identities:
-- the pool reads them back as numbers, in insertion order as SQLite's rowids.

ALTER TABLE revisions ADD COLUMN artifact_revision_id text COLLATE "C";
ALTER TABLE listeners ADD COLUMN is_default boolean NOT NULL DEFAULT false;
-- At most one default listener per workspace (listeners.create/update unmark
-- the previous one first, under a per-workspace lock).
CREATE UNIQUE INDEX listeners_tenant_default ON listeners (tenant_id) WHERE is_default;
-- The embedded listener's deployments (deployments.assigned(null)); 001's
-- deployments_listener serves those of the other listeners.
CREATE INDEX deployments_embedded ON deployments (created_at, id) WHERE listener_id IS NULL;

CREATE TABLE revision_events (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  revision_id   text COLLATE "C" NOT NULL,
  deployment_id text COLLATE "C" NOT NULL,
  at            timestamptz NOT NULL,
  status        text COLLATE "C" NOT NULL,
  message       text NOT NULL
);
CREATE INDEX revision_events_revision ON revision_events (revision_id, id);
CREATE INDEX revision_events_deployment ON revision_events (deployment_id);

CREATE TABLE deployment_logs (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  deployment_id text COLLATE "C" NOT NULL,
  revision_id   text COLLATE "C",
  kind          text COLLATE "C" NOT NULL,
  timestamp     timestamptz NOT NULL,
  level         text COLLATE "C" NOT NULL,
  -- "C": lower() folds ASCII only, as SQLite's (the case-insensitive query filter).
  message       text COLLATE "C" NOT NULL
);
CREATE INDEX deployment_logs_deployment ON deployment_logs (deployment_id, kind, id);
CREATE INDEX deployment_logs_revision ON deployment_logs (revision_id, kind, id);
