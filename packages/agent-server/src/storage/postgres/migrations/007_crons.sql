-- Scheduled runs (crons): the table of sqlite/migrations/007_crons.sql, in PostgreSQL types. A scheduler in every
-- process that executes runs claims a due tick with a conditional UPDATE of next_run_date (from the value it read to
-- the next tick) and inserts the tick's run in the same transaction: one run per tick whatever the number of processes.
CREATE TABLE crons (
  seq              bigserial NOT NULL,  -- insertion order: the tie-breaker of sorted searches
  cron_id          text COLLATE "C" PRIMARY KEY,
  assistant_id     text COLLATE "C" NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
  thread_id        text COLLATE "C" REFERENCES threads (thread_id) ON DELETE CASCADE,  -- NULL: stateless
  on_run_completed text,                -- stateless crons: 'delete' or 'keep' the run's thread
  end_time         timestamptz,         -- no run after it
  schedule         text NOT NULL,
  timezone         text,                -- IANA; NULL: UTC
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  payload          jsonb NOT NULL,      -- the body of the runs it creates
  user_id          text,
  next_run_date    timestamptz,         -- NULL: nothing scheduled (disabled, or past end_time)
  metadata         jsonb NOT NULL DEFAULT '{}',
  enabled          boolean NOT NULL DEFAULT true
);
CREATE INDEX crons_due ON crons (next_run_date) WHERE next_run_date IS NOT NULL;
CREATE INDEX crons_assistant ON crons (assistant_id);
CREATE INDEX crons_thread ON crons (thread_id) WHERE thread_id IS NOT NULL;
CREATE INDEX crons_metadata ON crons USING gin (metadata jsonb_path_ops);
