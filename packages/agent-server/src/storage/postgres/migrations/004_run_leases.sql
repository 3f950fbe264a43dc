-- Attempts a graceful shutdown handed back to the queue: they do not count against the attempt limit.
ALTER TABLE runs ADD COLUMN handovers integer NOT NULL DEFAULT 0;
-- A cancel asked while the run was running ('interrupt' or 'rollback'): if the attempt executing it is gone,
-- the attempt that executes it next honours it instead of running the graph.
ALTER TABLE runs ADD COLUMN cancel_action text;
