import type { Client, Thread, ThreadStatus } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useRef, useState } from "react";
import { errorText } from "./client";

/** Threads fetched per request: a page shows at once, and a thousand threads take twenty requests, each on demand. */
export const PAGE_SIZE = 50;
/** The most the server answers in one search (a reload fetches what was shown, up to this). */
const MAX_LIMIT = 1000;

export interface ThreadFilter {
  status?: ThreadStatus;
  metadata?: Record<string, unknown>;
}

export interface ThreadPages {
  threads: Thread[];
  /** How many threads match, when the server said. */
  total: number | null;
  loading: boolean;
  error: string | null;
  /** Every matching thread is loaded. */
  done: boolean;
  /** Fetches the next page (a no-op while one is on its way, or when all are loaded). */
  loadMore: () => void;
}

const SORT = { sortBy: "updated_at", sortOrder: "desc" } as const;

/**
 * The threads matching `filter`, most recently updated first, a page at a time. A new filter starts over from
 * the first page; a refresh (a run started or ended) fetches again as many as were shown, so the list keeps its
 * place. An answer to a superseded request is dropped.
 */
export function useThreadPages(client: Client, filter: ThreadFilter, refreshKey: number): ThreadPages {
  const [state, setState] = useState<Omit<ThreadPages, "loadMore">>({
    threads: [],
    total: null,
    loading: true,
    error: null,
    done: false,
  });
  const generation = useRef(0);
  const busy = useRef(false);
  const shown = useRef({ filter, count: 0 });

  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshKey is the caller's signal to fetch again
  useEffect(() => {
    const controller = new AbortController();
    const current = ++generation.current;
    if (shown.current.filter !== filter) shown.current = { filter, count: 0 };
    const limit = Math.min(MAX_LIMIT, Math.max(PAGE_SIZE, shown.current.count));
    busy.current = true;
    setState((previous) => ({ ...previous, loading: true }));
    const { signal } = controller;
    Promise.all([
      client.threads.search({ ...filter, ...SORT, limit, offset: 0, signal }),
      client.threads.count({ ...filter, signal }).catch(() => null),
    ]).then(
      ([threads, total]) => {
        if (current !== generation.current) return;
        busy.current = false;
        shown.current.count = threads.length;
        setState({ threads, total, loading: false, error: null, done: threads.length < limit });
      },
      (error: unknown) => {
        if (current !== generation.current) return;
        busy.current = false;
        setState((previous) => ({ ...previous, loading: false, error: errorText(error) }));
      },
    );
    return () => controller.abort();
  }, [client, filter, refreshKey]);

  const done = state.done;
  const loadMore = useCallback(() => {
    if (busy.current || done) return;
    busy.current = true;
    const current = generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    client.threads.search({ ...filter, ...SORT, limit: PAGE_SIZE, offset: shown.current.count }).then(
      (page) => {
        if (current !== generation.current) return;
        busy.current = false;
        setState((previous) => {
          // Offsets shift when a thread is updated meanwhile: a thread seen already is not listed twice.
          const seen = new Set(previous.threads.map((thread) => thread.thread_id));
          const threads = [...previous.threads, ...page.filter((thread) => !seen.has(thread.thread_id))];
          shown.current.count = threads.length;
          return { ...previous, threads, loading: false, error: null, done: page.length < PAGE_SIZE };
        });
      },
      (error: unknown) => {
        if (current !== generation.current) return;
        busy.current = false;
        setState((previous) => ({ ...previous, loading: false, error: errorText(error) }));
      },
    );
  }, [client, filter, done]);

  return { ...state, loadMore };
}
