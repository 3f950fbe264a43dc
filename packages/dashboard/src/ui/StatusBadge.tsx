const GOOD = new Set(["DEPLOYED", "READY"]);
const BAD = new Set(["CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED", "INTERRUPTED", "UNKNOWN"]);
const IDLE = new Set(["SKIPPED", "UNUSED", "AWAITING_DELETE"]);

/** A status as its own word; the colour only repeats what the word says. */
export function StatusBadge({ status }: { status: string | undefined }) {
  if (!status) return <span className="badge">—</span>;
  const tone = GOOD.has(status) ? "good" : BAD.has(status) ? "bad" : IDLE.has(status) ? "idle" : "busy";
  return <span className={`badge ${tone}`}>{status}</span>;
}
