import { useSession } from "../api/context";
import type { Page, RevisionEvent } from "../api/types";
import { usePolling } from "../hooks/usePolling";
import { ErrorNote } from "../ui/ErrorNote";
import { StatusBadge } from "../ui/StatusBadge";
import { formatTime } from "../ui/time";

const REFRESH_MS = 2000;

/**
 * Every status a revision went through, oldest first, with the reason the
 * control plane gave, and what happened to it meanwhile (a server restarted):
 * those keep the status and say why in their reason.
 */
export function RevisionEvents({
  deploymentId,
  revisionId,
  final,
}: {
  deploymentId: string;
  revisionId: string;
  final: boolean;
}) {
  const { api } = useSession();
  const { data, error } = usePolling(
    () => api.get<Page<RevisionEvent>>(`v2/deployments/${deploymentId}/revisions/${revisionId}/events`),
    // A final revision has no more events: one read is enough.
    final ? null : REFRESH_MS,
    [api, deploymentId, revisionId, final],
  );
  return (
    <section aria-labelledby="events-title">
      <h3 id="events-title">Status history</h3>
      <ErrorNote error={error} />
      <ol className="events">
        {data?.resources.map((event) => (
          <li key={`${event.at}-${event.status}-${event.reason}`} className={event.type === "Warning" ? "warning" : undefined}>
            <time dateTime={event.at}>{formatTime(event.at)}</time> <StatusBadge status={event.status} />{" "}
            <span className="tag">{event.reason}</span> <span className="reason">{event.message}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
