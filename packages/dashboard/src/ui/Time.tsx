import { useSyncExternalStore } from "react";
import { formatRelative, formatTime } from "./time";

/** One clock for every relative time on the page: "just now" becomes "1 minute ago" without a reload. */
const TICK_MS = 15_000;
const listeners = new Set<() => void>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  timer ??= setInterval(() => {
    now = Date.now();
    for (const notify of listeners) notify();
  }, TICK_MS);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const readNow = () => now;

/** A timestamp shown relative ("5 minutes ago"), its full date in the tooltip and the machine-readable attribute. */
export function Time({ iso, relative = true }: { iso: string | null | undefined; relative?: boolean }) {
  // Re-renders on each tick of the shared clock.
  useSyncExternalStore(subscribe, readNow);
  if (!iso) return null;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relative ? formatRelative(iso) : formatTime(iso)}
    </time>
  );
}
