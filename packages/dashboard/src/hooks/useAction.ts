import { useCallback, useState } from "react";

/** What went wrong, in words. */
export const messageOf = (caught: unknown) => (caught instanceof Error ? caught.message : String(caught));

export interface Action {
  /** Runs `action`, one at a time: `busy` meanwhile, `error` when it throws. */
  run: (action: () => Promise<void>) => Promise<void>;
  busy: boolean;
  error?: string;
  setError: (error: string | undefined) => void;
}

/** A button's request: disabled while it runs, its failure shown next to it. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  }, []);
  return { run, busy, error, setError };
}
