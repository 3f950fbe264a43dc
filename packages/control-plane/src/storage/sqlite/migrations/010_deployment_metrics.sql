-- Deployment metrics (docs/control-plane.md, "Metrics"): samples of each
-- deployment's agent servers, as listeners read them from /metrics. Counters
-- are deltas over interval_seconds; runs is the JSON of the runs the server
-- ended in the interval (NULL: it executes none). Kept for
-- BERTH_METRICS_RETENTION_SECONDS; a purged deployment's go with it.

CREATE TABLE deployment_metrics (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  deployment_id TEXT NOT NULL,
  replica TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  interval_seconds REAL NOT NULL,
  cpu_seconds REAL NOT NULL,
  memory_bytes INTEGER NOT NULL,
  pending_runs INTEGER NOT NULL,
  running_runs INTEGER NOT NULL,
  runs TEXT
);
CREATE INDEX deployment_metrics_deployment ON deployment_metrics (deployment_id, timestamp);
CREATE INDEX deployment_metrics_timestamp ON deployment_metrics (timestamp);
