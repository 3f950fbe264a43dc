-- Thread TTL (`ttl` on thread create/update, langgraph.json's checkpointer.ttl.default_ttl): a thread whose expires_at
-- has passed is hidden from search and count at once, and deleted with everything it owns by the sweeper later.
ALTER TABLE threads ADD COLUMN expires_at timestamptz;        -- NULL: never
ALTER TABLE threads ADD COLUMN ttl_minutes double precision;  -- as given (may be fractional); NULL: none
-- Sweeps take the earliest expired threads first.
CREATE INDEX threads_expires_at ON threads (expires_at) WHERE expires_at IS NOT NULL;
