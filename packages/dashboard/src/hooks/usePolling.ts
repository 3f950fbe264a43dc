import { useCallback, useEffect, useRef, useState } from "react";
import { messageOf } from "./useAction";

export interface Polled<T> {
  data?: T;
  error?: string;
  /** Fetch again now (after a change the page made). */
  refresh: () => void;
}

/**
 * Calls `load` now and then every `intervalMs` (null: once) while the
 * component is mounted, one call at a time; `deps` restart it.
 */
export function usePolling<T>(load: () => Promise<T>, intervalMs: number | null, deps: unknown[]): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const refresh = useCallback(() => setTick((value) => value + 1), []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: deps are the caller's, tick restarts the loop on refresh
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const next = await loadRef.current();
        if (stopped) return;
        setData(next);
        setError(undefined);
      } catch (caught) {
        if (!stopped) setError(messageOf(caught));
      }
      if (!stopped && intervalMs !== null) timer = setTimeout(run, intervalMs);
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [...deps, tick, intervalMs]);

  return { data, error, refresh };
}
