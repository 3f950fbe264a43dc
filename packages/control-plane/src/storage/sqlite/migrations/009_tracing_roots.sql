-- The traces of a project (its root runs), newest first, without reading the
-- spans under them: the dashboard's traces list filters and pages over these.
CREATE INDEX traced_runs_roots ON traced_runs (project_id, start_time, id) WHERE parent_run_id IS NULL;
