import type { Client, ThreadState } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useRef, useState } from "react";
import { errorText } from "../conversations/client";
import { checkpointIdOf, mergeHistory } from "./time-travel-tree";

/** Checkpoints read per request: a long history comes in pages, older ones on demand. */
export const HISTORY_PAGE = 100;

export interface CheckpointHistory {
  /** Every checkpoint read so far, newest first. */
  states: ThreadState[];
  loading: boolean;
  error: string | null;
  /** Older checkpoints remain on the server. */
  hasOlder: boolean;
  loadOlder: () => void;
  /** Reads the newest page again; resolves with the merged history (undefined when superseded or failed). */
  refresh: () => Promise<ThreadState[] | undefined>;
}

/**
 * The thread's history, read again whenever `version` changes. A newer read supersedes an older one still under
 * way; older pages already read are kept (checkpoints never change), so a refresh costs one page.
 */
export function useCheckpointHistory(client: Client, threadId: string, version: number): CheckpointHistory {
  const [states, setStates] = useState<ThreadState[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [hasOlder, setHasOlder] = useState(false);
  const kept = useRef<{ threadId: string; states: ThreadState[]; pagedOlder: boolean }>({
    threadId,
    states: [],
    pagedOlder: false,
  });
  const generation = useRef(0);

  const read = useCallback(
    async (before: string | undefined): Promise<ThreadState[] | undefined> => {
      const run = ++generation.current;
      if (kept.current.threadId !== threadId) kept.current = { threadId, states: [], pagedOlder: false };
      setLoading(true);
      try {
        const page = await client.threads.getHistory(threadId, {
          limit: HISTORY_PAGE,
          ...(before ? { before: { configurable: { checkpoint_id: before } } } : {}),
        });
        if (run !== generation.current) return undefined;
        const merged = mergeHistory(page, kept.current.states);
        if (before || !kept.current.pagedOlder) setHasOlder(page.length === HISTORY_PAGE);
        kept.current = { threadId, states: merged, pagedOlder: kept.current.pagedOlder || Boolean(before) };
        setStates(merged);
        setError(null);
        return merged;
      } catch (failure) {
        if (run === generation.current) setError(errorText(failure));
        return undefined;
      } finally {
        if (run === generation.current) setLoading(false);
      }
    },
    [client, threadId],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the signal to read again
  useEffect(() => {
    if (kept.current.threadId !== threadId) setStates([]);
    void read(undefined);
    // A read still under way when the thread changes is dropped by its generation.
    return () => {
      generation.current++;
    };
  }, [read, threadId, version]);

  const loadOlder = useCallback(() => {
    const oldest = kept.current.states.at(-1);
    const id = oldest ? checkpointIdOf(oldest) : undefined;
    if (id) void read(id);
  }, [read]);
  const refresh = useCallback(() => read(undefined), [read]);
  return { states, loading, error, hasOlder, loadOlder, refresh };
}
