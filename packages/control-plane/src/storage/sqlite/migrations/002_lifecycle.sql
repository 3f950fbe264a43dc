-- What running revisions needs: timelines, logs, redeploys, default listeners.
ALTER TABLE revisions ADD COLUMN artifact_revision_id TEXT;
ALTER TABLE listeners ADD COLUMN is_default INTEGER NOT NULL DEFAULT 0;
CREATE INDEX deployments_listener ON deployments (listener_id);

CREATE TABLE revision_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  revision_id TEXT NOT NULL,
  deployment_id TEXT NOT NULL,
  at TEXT NOT NULL,
  status TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX revision_events_revision ON revision_events (revision_id, id);

CREATE TABLE deployment_logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  deployment_id TEXT NOT NULL,
  revision_id TEXT,
  kind TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  level TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX deployment_logs_deployment ON deployment_logs (deployment_id, kind, id);
CREATE INDEX deployment_logs_revision ON deployment_logs (revision_id, kind, id);
