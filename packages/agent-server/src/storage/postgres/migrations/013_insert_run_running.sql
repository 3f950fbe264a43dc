-- A run claimed at its creation is inserted running, not inserted pending and then claimed. It never enters the
-- queue's index (runs_pending), which then holds only runs that wait: before, each such run left a dead entry there
-- until vacuum (or a scan) removed it, and the check for an older startable run walked those entries, about as many
-- as the runs claimed in the last moments (under load, a quarter of a millisecond per run).
--
-- berth_insert_run takes the claim (p_claim_owner, p_now_ms, p_lease_expires_at) itself, and
-- berth_insert_run_claimed is gone. Its rows: the thread's inflight runs, then the new run as created (pending, as its
-- creation answers), then, when it claimed it, the run once more as claimed: the run can start now (available, no
-- other run of its thread inflight: the thread stays locked until commit) and no older run could (a claim would take
-- that one first). The claim is the queue's (run-queue.ts): running, attempt counted, leased to p_claim_owner until
-- p_lease_expires_at; the thread is busy already.
DROP FUNCTION berth_insert_run_claimed(text, text, text, text, jsonb, jsonb, text, timestamptz, bigint, boolean, jsonb, jsonb,
  text, bigint, bigint);
DROP FUNCTION berth_insert_run(text, text, text, text, jsonb, jsonb, text, timestamptz, bigint, boolean, jsonb, jsonb);

CREATE FUNCTION berth_insert_run(
  p_run_id text, p_thread_id text, p_assistant_id text, p_graph_id text, p_metadata jsonb, p_kwargs jsonb,
  p_multitask_strategy text, p_now timestamptz, p_available_at bigint,
  p_create_thread boolean, p_thread_metadata jsonb, p_thread_config jsonb,
  p_claim_owner text DEFAULT NULL, p_now_ms bigint DEFAULT NULL, p_lease_expires_at bigint DEFAULT NULL
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
DECLARE
  created boolean := false;
  inflight integer;
  claimed runs;
  as_created runs;
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
  -- Every run the check sees is older than the one inserted next (its seq is higher than theirs).
  IF p_claim_owner IS NULL OR inflight > 0 OR p_available_at > p_now_ms OR EXISTS (
    SELECT 1 FROM runs r
     WHERE r.status = 'pending' AND r.available_at <= p_available_at
       AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running' OFFSET 0)
       AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND o.seq < r.seq OFFSET 0)
  ) THEN
    RETURN QUERY INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy,
                                   created_at, updated_at, available_at)
      VALUES (p_run_id, p_thread_id, p_assistant_id, 'pending', p_metadata, p_kwargs, p_multitask_strategy,
              p_now, p_now, p_available_at)
      RETURNING *;
    RETURN;
  END IF;
  INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy,
                    created_at, updated_at, available_at, attempt, lease_owner, lease_expires_at)
    VALUES (p_run_id, p_thread_id, p_assistant_id, 'running', p_metadata, p_kwargs, p_multitask_strategy,
            p_now, p_now, p_available_at, 1, p_claim_owner, p_lease_expires_at)
    RETURNING * INTO claimed;
  as_created := claimed;
  as_created.status := 'pending';
  as_created.attempt := 0;
  as_created.lease_owner := NULL;
  as_created.lease_expires_at := NULL;
  RETURN NEXT as_created;
  RETURN NEXT claimed;
END $$;
