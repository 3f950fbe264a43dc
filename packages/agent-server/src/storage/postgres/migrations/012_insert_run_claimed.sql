-- Creating a run and claiming it for the creator's worker in one round trip: a process with a free slot starts its
-- run without a wake-up, a claim statement and the wait between them. berth_insert_run's rows (the thread's
-- inflight runs, then the new run), then the new run once more, as claimed, when it claimed it: the run can start
-- now (available, no other run of its thread inflight: the thread stays locked until commit) and no older run
-- could (a claim would take that one first). The claim is the queue's (run_queue.ts): running, attempt counted,
-- leased to p_owner until p_lease_expires_at; the thread is busy already.
CREATE FUNCTION berth_insert_run_claimed(
  p_run_id text, p_thread_id text, p_assistant_id text, p_graph_id text, p_metadata jsonb, p_kwargs jsonb,
  p_multitask_strategy text, p_now timestamptz, p_available_at bigint,
  p_create_thread boolean, p_thread_metadata jsonb, p_thread_config jsonb,
  p_owner text, p_now_ms bigint, p_lease_expires_at bigint
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
DECLARE
  entry runs;
  created runs;
  inflight integer := 0;
BEGIN
  FOR entry IN SELECT * FROM berth_insert_run(p_run_id, p_thread_id, p_assistant_id, p_graph_id, p_metadata, p_kwargs,
      p_multitask_strategy, p_now, p_available_at, p_create_thread, p_thread_metadata, p_thread_config) LOOP
    IF entry.run_id = p_run_id THEN created := entry; ELSE inflight := inflight + 1; END IF;
    RETURN NEXT entry;
  END LOOP;
  IF created.run_id IS NULL OR inflight > 0 OR p_available_at > p_now_ms THEN RETURN; END IF;
  IF EXISTS (
    SELECT 1 FROM runs r
     WHERE r.status = 'pending' AND r.available_at <= p_now_ms AND (r.available_at, r.seq) < (created.available_at, created.seq)
       AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running' OFFSET 0)
       AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND o.seq < r.seq OFFSET 0)
  ) THEN RETURN; END IF;
  RETURN QUERY UPDATE runs SET status = 'running', attempt = attempt + 1, lease_owner = p_owner,
                               lease_expires_at = p_lease_expires_at, updated_at = p_now
    WHERE run_id = p_run_id RETURNING *;
END $$;
