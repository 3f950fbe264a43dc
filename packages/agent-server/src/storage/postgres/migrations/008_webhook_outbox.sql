-- Webhook deliveries, written in the transaction that ends their run and delivered by whichever process claims them.
-- No foreign key to runs: a delivery outlives its run (a stateless run is deleted with its thread as it ends).
CREATE TABLE webhook_outbox (
  run_id           text COLLATE "C" PRIMARY KEY,
  thread_id        text COLLATE "C" NOT NULL,
  url              text NOT NULL,
  payload          jsonb NOT NULL,     -- the run's JSON at its end; webhook_sent_at is added at each attempt
  status           text NOT NULL,      -- pending | delivered | failed
  attempts         integer NOT NULL DEFAULT 0,
  last_status      integer,            -- HTTP status of the last attempt (NULL: no answer)
  last_error       text,
  next_attempt_at  bigint NOT NULL,    -- epoch ms
  give_up_at       bigint NOT NULL,    -- epoch ms: no retry is scheduled after it
  lease_owner      text,
  lease_expires_at bigint,             -- epoch ms
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  delivered_at     timestamptz
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_outbox_ended ON webhook_outbox (updated_at) WHERE status <> 'pending';
