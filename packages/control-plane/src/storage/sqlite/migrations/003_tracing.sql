-- Tracing (src/tracing): runs as the langsmith client sends them, feedback, and
-- pre-signed feedback tokens. Runs go with their project (ON DELETE CASCADE:
-- DELETE /v2/deployments/{id}?delete_tracing_project=true removes its traces).
-- Feedback and tokens name a run that may not be ingested yet (the client
-- batches runs; a token is issued when the run starts), so they carry the
-- workspace and no foreign key.

CREATE TABLE traced_runs (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES tracing_projects(id) ON DELETE CASCADE,
  trace_id TEXT NOT NULL,
  parent_run_id TEXT,
  dotted_order TEXT,
  name TEXT,
  run_type TEXT,
  start_time TEXT,
  end_time TEXT,
  inputs TEXT,
  outputs TEXT,
  error TEXT,
  extra TEXT,
  tags TEXT,
  events TEXT,
  reference_example_id TEXT,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  total_tokens INTEGER,
  thread_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX traced_runs_trace ON traced_runs (tenant_id, trace_id, dotted_order);
CREATE INDEX traced_runs_project ON traced_runs (project_id, start_time, id);
CREATE INDEX traced_runs_thread ON traced_runs (project_id, thread_id, start_time) WHERE thread_id IS NOT NULL;

CREATE TABLE tracing_feedback (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  trace_id TEXT,
  key TEXT NOT NULL,
  score REAL,
  value TEXT,
  comment TEXT,
  correction TEXT,
  metadata TEXT,
  source TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX tracing_feedback_run ON tracing_feedback (tenant_id, run_id, created_at);

CREATE TABLE feedback_tokens (
  token_hash TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  key TEXT NOT NULL,
  feedback_config TEXT,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX feedback_tokens_run ON feedback_tokens (tenant_id, run_id);
