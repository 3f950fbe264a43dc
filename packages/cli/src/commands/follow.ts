import type { ControlPlaneClient, LogLine, Revision } from "./client.js";

/** Statuses after which a revision no longer changes (docs/control-plane.md). */
export function isFinal(status: string): boolean {
  return status === "DEPLOYED" || status === "SKIPPED" || status === "INTERRUPTED" || status.endsWith("FAILED");
}

export interface FollowHandlers {
  onStatus(revision: Revision): void;
  onLog(line: LogLine): void;
  signal?: AbortSignal;
}

/** How long one long poll waits for a status change before the build log is read again. */
const POLL_SECONDS = 2;

/**
 * Follows a revision until it is final: each status change and each new build
 * log line, in order. The long poll (`while_status`) is the wait: it answers
 * as soon as the status leaves the one last seen, else after POLL_SECONDS.
 */
export async function followRevision(
  client: ControlPlaneClient,
  deploymentId: string,
  revisionId: string,
  { onStatus, onLog, signal }: FollowHandlers,
): Promise<Revision> {
  const path = `/v2/deployments/${deploymentId}/revisions/${revisionId}`;
  let printed = 0;
  const drainLogs = async () => {
    for (;;) {
      const lines = await client.logs(deploymentId, revisionId, "build", printed, signal);
      for (const line of lines) onLog(line);
      printed += lines.length;
      if (lines.length < 1000) return;
    }
  };
  let revision = await client.request<Revision>("GET", path, undefined, signal);
  onStatus(revision);
  while (!isFinal(revision.status)) {
    const next = await client.request<Revision>(
      "GET",
      `${path}?wait_seconds=${POLL_SECONDS}&while_status=${revision.status}`,
      undefined,
      signal,
    );
    await drainLogs();
    if (next.status !== revision.status) onStatus(next);
    revision = next;
  }
  await drainLogs();
  return revision;
}
