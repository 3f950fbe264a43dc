-- Runs are the queue of record; their events are the persisted stream log.
-- Epoch-millisecond columns are bigint, as SQLite's INTEGER.

CREATE TABLE runs (
  seq                bigserial NOT NULL,  -- insertion order (SQLite's rowid): FIFO per thread, list order
  run_id             text COLLATE "C" PRIMARY KEY,
  thread_id          text COLLATE "C" NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  assistant_id       text COLLATE "C" NOT NULL,
  status             text COLLATE "C" NOT NULL,
  metadata           jsonb NOT NULL DEFAULT '{}',
  kwargs             jsonb NOT NULL,
  multitask_strategy text NOT NULL,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  available_at       bigint NOT NULL,   -- epoch ms; later than creation with after_seconds
  attempt            integer NOT NULL DEFAULT 0,
  lease_owner        text,
  lease_expires_at   bigint,            -- epoch ms
  ended_at           timestamptz,
  output             jsonb              -- final values or {"__error__": ...}
);
CREATE INDEX runs_thread ON runs (thread_id, status, seq);
CREATE INDEX runs_queue ON runs (status, available_at);
CREATE INDEX runs_leases ON runs (lease_owner) WHERE status = 'running';
-- The database itself guarantees at most one running run per thread.
CREATE UNIQUE INDEX runs_one_running_per_thread ON runs (thread_id) WHERE status = 'running';

CREATE TABLE run_events (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq    bigint NOT NULL,   -- attempt k numbers from (k-1)·10⁹: beyond integer
  event  text NOT NULL,
  data   text NOT NULL,     -- the data line's JSON text, returned verbatim
  PRIMARY KEY (run_id, seq)
);
