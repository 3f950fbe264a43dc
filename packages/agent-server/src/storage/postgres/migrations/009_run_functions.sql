-- Creating a run and ending one, each in one round trip: the statements the
-- repository sent one at a time inside a transaction (BEGIN, lock the thread,
-- read its inflight runs, insert; BEGIN, lock, update the run, record the
-- thread, COMMIT) run server-side, in the statement's own transaction. Same
-- locks in the same order (thread, then run), so the same guarantees.

-- The thread's inflight runs (pending, running; by seq) and then the new run;
-- no row when the thread does not exist (and may not be created), only the
-- inflight runs when the strategy is 'reject' and there are some.
CREATE FUNCTION berth_insert_run(
  p_run_id text, p_thread_id text, p_assistant_id text, p_graph_id text, p_metadata jsonb, p_kwargs jsonb,
  p_multitask_strategy text, p_now timestamptz, p_available_at bigint,
  p_create_thread boolean, p_thread_metadata jsonb, p_thread_config jsonb
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
DECLARE
  created boolean := false;
  inflight integer;
BEGIN
  -- Lock the thread, or create it; when a concurrent transaction creates it
  -- first, the insert waits for that one to commit and we lock it then.
  LOOP
    PERFORM 1 FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
    EXIT WHEN FOUND;
    IF NOT p_create_thread THEN RETURN; END IF;
    INSERT INTO threads (thread_id, status, metadata, config, created_at, updated_at)
      VALUES (p_thread_id, 'busy', p_thread_metadata, p_thread_config, p_now, p_now)
      ON CONFLICT (thread_id) DO NOTHING;
    IF FOUND THEN created := true; EXIT; END IF;
  END LOOP;
  RETURN QUERY SELECT * FROM runs WHERE thread_id = p_thread_id AND status IN ('pending', 'running') ORDER BY seq;
  GET DIAGNOSTICS inflight = ROW_COUNT;
  IF inflight > 0 AND p_multitask_strategy = 'reject' THEN RETURN; END IF;
  IF NOT created THEN
    UPDATE threads SET status = 'busy', updated_at = p_now,
      metadata = metadata || jsonb_build_object('graph_id', p_graph_id, 'assistant_id', p_assistant_id)
     WHERE thread_id = p_thread_id;
  END IF;
  RETURN QUERY INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy,
                                 created_at, updated_at, available_at)
    VALUES (p_run_id, p_thread_id, p_assistant_id, 'pending', p_metadata, p_kwargs, p_multitask_strategy,
            p_now, p_now, p_available_at)
    RETURNING *;
END $$;

-- Ends a run (under the claim p_lease_owner/p_lease_attempt, when given) and
-- records its thread's state, or deletes its thread. Returns the thread id,
-- or null when the run does not exist or the claim no longer holds it.
-- Status p_thread_status, except that idle becomes busy while more runs wait.
CREATE FUNCTION berth_finish_run(
  p_run_id text, p_status text, p_output jsonb, p_now timestamptz, p_feedback_urls jsonb,
  p_lease_owner text, p_lease_attempt integer, p_delete_thread boolean,
  p_thread_status text, p_values jsonb, p_interrupts jsonb
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  thread text;
BEGIN
  SELECT thread_id INTO thread FROM threads
   WHERE thread_id = (SELECT r.thread_id FROM runs r WHERE r.run_id = p_run_id) FOR UPDATE;
  IF thread IS NULL THEN RETURN NULL; END IF;
  UPDATE runs SET status = p_status, output = p_output, ended_at = p_now, updated_at = p_now,
         lease_owner = NULL, lease_expires_at = NULL,
         kwargs = CASE WHEN p_feedback_urls IS NULL THEN kwargs ELSE jsonb_set(kwargs, '{feedback_urls}', p_feedback_urls) END
   WHERE run_id = p_run_id
     AND (p_lease_owner IS NULL OR (status = 'running' AND lease_owner = p_lease_owner AND attempt = p_lease_attempt));
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF p_delete_thread THEN
    DELETE FROM threads WHERE thread_id = thread;
  ELSE
    UPDATE threads SET "values" = p_values, interrupts = p_interrupts, updated_at = p_now,
           status = CASE WHEN p_thread_status = 'idle' AND EXISTS
             (SELECT 1 FROM runs WHERE thread_id = thread AND status IN ('pending', 'running')) THEN 'busy' ELSE p_thread_status END
     WHERE thread_id = thread;
  END IF;
  RETURN thread;
END $$;
