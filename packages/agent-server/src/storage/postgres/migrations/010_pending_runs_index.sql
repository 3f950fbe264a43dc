-- The queue's index holds only pending runs, in claim order: a claim walks it from the oldest and stops at the
-- first startable run, and the status changes of running and finished runs no longer touch it.
CREATE INDEX runs_pending ON runs (available_at, seq) WHERE status = 'pending';
DROP INDEX runs_queue;
