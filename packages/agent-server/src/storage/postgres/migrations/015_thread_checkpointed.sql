-- Whether a thread has a root checkpoint, asked by the statement that inserts
-- and claims a run, after berth_insert_run locked the thread: the run skips
-- its first read of the thread's state when it has none (nothing writes a
-- root checkpoint while a run holds its thread). plpgsql and VOLATILE, so its
-- query takes a snapshot of its own once the insert ran: the calling
-- statement's snapshot was taken before the insert waited for the thread's
-- lock, and misses what the thread's last holder committed meanwhile.
CREATE FUNCTION berth_thread_checkpointed(p_thread_id text) RETURNS boolean VOLATILE LANGUAGE plpgsql AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = p_thread_id AND checkpoint_ns = '');
END $$;
