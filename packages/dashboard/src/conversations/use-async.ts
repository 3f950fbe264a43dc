import { type DependencyList, useCallback, useEffect, useState } from "react";
import { errorText } from "./client";

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads with `load` whenever `deps` change or `reload()` is called; a load superseded before it ends is
 * aborted and its answer dropped, so a slow answer never overwrites a newer one.
 */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): Loaded<T> {
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps stand for `load`
  useEffect(() => {
    const controller = new AbortController();
    setState((previous) => ({ ...previous, loading: true }));
    load(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ data, error: null, loading: false }),
      (error: unknown) =>
        !controller.signal.aborted && setState((previous) => ({ ...previous, error: errorText(error), loading: false })),
    );
    return () => controller.abort();
  }, [...deps, version]);
  const reload = useCallback(() => setVersion((value) => value + 1), []);
  return { ...state, reload };
}
