-- The tables of sqlite/migrations/003_tracing.sql, in PostgreSQL types (see
-- 001_control_plane.sql): ids, names and dotted orders COLLATE "C" so they sort
-- byte-wise as in SQLite (a trace's runs are read in dotted order); JSON as
-- jsonb; scores as double precision (SQLite REAL).

CREATE TABLE traced_runs (
  tenant_id            text COLLATE "C" NOT NULL,
  id                   text COLLATE "C" NOT NULL,
  project_id           text COLLATE "C" NOT NULL REFERENCES tracing_projects (id) ON DELETE CASCADE,
  trace_id             text COLLATE "C" NOT NULL,
  parent_run_id        text COLLATE "C",
  dotted_order         text COLLATE "C",
  name                 text,
  run_type             text COLLATE "C",
  start_time           timestamptz,
  end_time             timestamptz,
  inputs               jsonb,
  outputs              jsonb,
  error                text,
  extra                jsonb,
  tags                 jsonb,
  events               jsonb,
  reference_example_id text COLLATE "C",
  prompt_tokens        bigint,
  completion_tokens    bigint,
  total_tokens         bigint,
  thread_id            text COLLATE "C",
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX traced_runs_trace ON traced_runs (tenant_id, trace_id, dotted_order);
CREATE INDEX traced_runs_project ON traced_runs (project_id, start_time, id);
CREATE INDEX traced_runs_thread ON traced_runs (project_id, thread_id, start_time) WHERE thread_id IS NOT NULL;

CREATE TABLE tracing_feedback (
  tenant_id  text COLLATE "C" NOT NULL,
  id         text COLLATE "C" NOT NULL,
  run_id     text COLLATE "C" NOT NULL,
  trace_id   text COLLATE "C",
  key        text COLLATE "C" NOT NULL,
  score      double precision,
  value      jsonb,
  comment    text,
  correction jsonb,
  metadata   jsonb,
  source     text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX tracing_feedback_run ON tracing_feedback (tenant_id, run_id, created_at);

CREATE TABLE feedback_tokens (
  token_hash      text COLLATE "C" PRIMARY KEY,
  tenant_id       text COLLATE "C" NOT NULL,
  run_id          text COLLATE "C" NOT NULL,
  key             text COLLATE "C" NOT NULL,
  feedback_config jsonb,
  expires_at      timestamptz NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE INDEX feedback_tokens_run ON feedback_tokens (tenant_id, run_id);
