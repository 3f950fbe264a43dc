-- Scheduled runs (crons). A scheduler in every process that executes runs claims a due tick by moving next_run_date
-- from the value it read to the next tick, only while it still is that value, and inserts the tick's run in the same
-- transaction: one run per tick whatever the number of processes.
CREATE TABLE crons (
  cron_id          TEXT PRIMARY KEY,
  assistant_id     TEXT NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
  thread_id        TEXT REFERENCES threads (thread_id) ON DELETE CASCADE,  -- NULL: stateless, a new thread per run
  on_run_completed TEXT,              -- stateless crons: 'delete' or 'keep' the run's thread
  end_time         TEXT,              -- no run after it
  schedule         TEXT NOT NULL,
  timezone         TEXT,              -- IANA; NULL: UTC
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  payload          TEXT NOT NULL,     -- the body of the runs it creates
  user_id          TEXT,
  next_run_date    TEXT,              -- NULL: nothing scheduled (disabled, or past end_time)
  metadata         TEXT NOT NULL DEFAULT '{}',
  enabled          INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX crons_due ON crons (next_run_date) WHERE next_run_date IS NOT NULL;
CREATE INDEX crons_assistant ON crons (assistant_id);
CREATE INDEX crons_thread ON crons (thread_id) WHERE thread_id IS NOT NULL;
