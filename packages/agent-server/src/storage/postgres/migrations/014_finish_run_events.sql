-- A run's end with the last events of its log: the log's last batch is
-- written in the end's transaction instead of a statement of its own before
-- it. An overload of berth_finish_run (migration 009), which processes of the
-- version before keep calling; events are not logged when the end deleted
-- the thread (a stateless run's) or was refused (the lease was lost).
CREATE FUNCTION berth_finish_run(
  p_run_id text, p_status text, p_output jsonb, p_now timestamptz, p_feedback_urls jsonb,
  p_lease_owner text, p_lease_attempt integer, p_delete_thread boolean,
  p_thread_status text, p_values jsonb, p_interrupts jsonb,
  p_event_seqs bigint[], p_event_names text[], p_event_data text[]
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  thread text;
BEGIN
  thread := berth_finish_run(p_run_id, p_status, p_output, p_now, p_feedback_urls, p_lease_owner, p_lease_attempt,
                             p_delete_thread, p_thread_status, p_values, p_interrupts);
  IF thread IS NOT NULL AND NOT p_delete_thread THEN
    INSERT INTO run_events (run_id, seq, event, data)
    SELECT p_run_id, e.seq, e.event, e.data FROM unnest(p_event_seqs, p_event_names, p_event_data) AS e(seq, event, data)
    ON CONFLICT (run_id, seq) DO NOTHING;
  END IF;
  RETURN thread;
END $$;
