-- The highest protocol v2 event seq a thread's runs logged: numbering goes on from it after the events are pruned.
ALTER TABLE threads ADD COLUMN event_seq bigint NOT NULL DEFAULT 0;
