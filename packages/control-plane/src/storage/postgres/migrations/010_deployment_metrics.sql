-- Deployment metrics: the table of sqlite/migrations/010_deployment_metrics.sql,
-- in PostgreSQL types (see 001_control_plane.sql).

CREATE TABLE deployment_metrics (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  deployment_id    text COLLATE "C" NOT NULL,
  replica          text COLLATE "C" NOT NULL,
  timestamp        timestamptz NOT NULL,
  interval_seconds double precision NOT NULL,
  cpu_seconds      double precision NOT NULL,
  memory_bytes     bigint NOT NULL,
  pending_runs     integer NOT NULL,
  running_runs     integer NOT NULL,
  runs             jsonb
);
CREATE INDEX deployment_metrics_deployment ON deployment_metrics (deployment_id, timestamp);
CREATE INDEX deployment_metrics_timestamp ON deployment_metrics (timestamp);
