-- Runs are the queue of record; their events are the persisted stream log.

CREATE TABLE runs (
  run_id             TEXT PRIMARY KEY,
  thread_id          TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  assistant_id       TEXT NOT NULL,
  status             TEXT NOT NULL,
  metadata           TEXT NOT NULL DEFAULT '{}',
  kwargs             TEXT NOT NULL,
  multitask_strategy TEXT NOT NULL,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL,
  available_at       INTEGER NOT NULL,   -- epoch ms; later than creation with after_seconds
  attempt            INTEGER NOT NULL DEFAULT 0,
  lease_owner        TEXT,
  lease_expires_at   INTEGER,            -- epoch ms
  ended_at           TEXT,
  output             TEXT                -- final values or {"__error__": ...}
);
CREATE INDEX runs_thread ON runs (thread_id, status);
CREATE INDEX runs_queue ON runs (status, available_at);
-- The database itself guarantees at most one running run per thread.
CREATE UNIQUE INDEX runs_one_running_per_thread ON runs (thread_id) WHERE status = 'running';

CREATE TABLE run_events (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq    INTEGER NOT NULL,
  event  TEXT NOT NULL,
  data   TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
