-- Signals between the processes sharing this database (BERTH_SQLITE_SHARED): each process appends small JSON messages
-- (wake-ups, cancellations, run starts and ends, "events flushed") and reads the rows past the last one it read.
-- AUTOINCREMENT: an id is never reused, even once older rows are pruned, so "id > last read" misses nothing.
-- Rows are pruned a minute after they were written.
CREATE TABLE broker_signals (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  payload    TEXT NOT NULL,
  created_at INTEGER NOT NULL   -- epoch ms
);
CREATE INDEX broker_signals_created_at ON broker_signals (created_at);
