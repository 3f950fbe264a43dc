import { formatRelative, formatTime } from "./time";

/** A timestamp shown relative ("5 minutes ago"), its full date in the tooltip and the machine-readable attribute. */
export function Time({ iso, relative = true }: { iso: string | null | undefined; relative?: boolean }) {
  if (!iso) return null;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relative ? formatRelative(iso) : formatTime(iso)}
    </time>
  );
}
