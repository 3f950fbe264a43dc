-- Webhook deliveries, written in the transaction that ends their run and delivered by whichever process claims them.
-- No foreign key to runs: a delivery outlives its run (a stateless run is deleted with its thread as it ends).
CREATE TABLE webhook_outbox (
  run_id           TEXT PRIMARY KEY,
  thread_id        TEXT NOT NULL,
  url              TEXT NOT NULL,
  payload          TEXT NOT NULL,      -- the run's JSON at its end; webhook_sent_at is added at each attempt
  status           TEXT NOT NULL,      -- pending | delivered | failed
  attempts         INTEGER NOT NULL DEFAULT 0,
  last_status      INTEGER,            -- HTTP status of the last attempt (NULL: no answer)
  last_error       TEXT,
  next_attempt_at  INTEGER NOT NULL,   -- epoch ms
  give_up_at       INTEGER NOT NULL,   -- epoch ms: no retry is scheduled after it
  lease_owner      TEXT,
  lease_expires_at INTEGER,            -- epoch ms
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  delivered_at     TEXT
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_outbox_ended ON webhook_outbox (updated_at) WHERE status <> 'pending';
