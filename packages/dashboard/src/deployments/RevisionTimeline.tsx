import { useState } from "react";
import { useSession } from "../api/context";
import { holds, isFinal, neverHadSource, type Revision } from "../api/types";
import { useAction } from "../hooks/useAction";
import { ErrorNote } from "../ui/ErrorNote";
import { StatusBadge } from "../ui/StatusBadge";
import { CopyButton } from "../ui/CopyButton";
import { Time } from "../ui/Time";
import { revisionNumber } from "./revisions";

interface RevisionTimelineProps {
  deploymentId: string;
  revisions: Revision[];
  selectedId: string | undefined;
  onSelect: (revisionId: string) => void;
  /** After a redeploy or an interrupt: the page reads the deployment again. */
  onChanged: () => void;
}

/**
 * The revisions, newest first, each with its status and the reason for it,
 * tagged "serving" or "replaced" as their conditions say. An earlier DEPLOYED
 * revision can be deployed again (a rollback: no build); one still in
 * progress can be interrupted. Revisions that never had source
 * (a new deployment's first one, which waited for the upload the next one
 * brought) are hidden until asked for, then shown greyed.
 */
export function RevisionTimeline({ deploymentId, revisions, selectedId, onSelect, onChanged }: RevisionTimelineProps) {
  const { api } = useSession();
  const { run, busy, error } = useAction();
  const [showAll, setShowAll] = useState(false);
  const withoutSource = revisions.filter(neverHadSource).length;
  const shown = showAll ? revisions : revisions.filter((revision) => !neverHadSource(revision));
  const act = (revisionId: string, action: "redeploy" | "interrupt") =>
    run(async () => {
      await api.post(`v2/deployments/${deploymentId}/revisions/${revisionId}/${action}`);
      onChanged();
    });

  return (
    <section aria-labelledby="revisions-title">
      <h2 id="revisions-title">Revisions</h2>
      <ErrorNote error={error} />
      {withoutSource > 0 && (
        <button type="button" aria-pressed={showAll} onClick={() => setShowAll(!showAll)}>
          {showAll ? "Hide" : "Show"} {withoutSource} {withoutSource === 1 ? "revision" : "revisions"} without source
        </button>
      )}
      <ol className="timeline">
        {shown.map((revision) => {
          const short = revision.id.slice(0, 8);
          const serving = holds(revision, "Serving");
          return (
            <li
              key={revision.id}
              data-revision={revision.id}
              className={neverHadSource(revision) ? "no-source" : undefined}
              aria-current={revision.id === selectedId ? "true" : undefined}
            >
              <div className="line">
                <StatusBadge status={revision.status} />
                <strong>
                  Revision {revisionNumber(revision) ?? ""} <code title={revision.id}>{short}</code>
                </strong>
                <CopyButton value={revision.id} label={`Copy the id of revision ${short}`} />
                {serving && <span className="tag">serving</span>}
                {holds(revision, "Replaced") && <span className="tag">replaced</span>}
                <Time iso={revision.created_at} />
              </div>
              {revision.status_message && <p className="reason">{revision.status_message}</p>}
              <div className="actions">
                <button
                  type="button"
                  aria-pressed={revision.id === selectedId}
                  aria-label={`Show logs of revision ${short}`}
                  onClick={() => onSelect(revision.id)}
                >
                  Show logs
                </button>
                {revision.status === "DEPLOYED" && !serving && (
                  <button
                    type="button"
                    aria-label={`Redeploy revision ${short}`}
                    disabled={busy}
                    onClick={() => act(revision.id, "redeploy")}
                  >
                    Redeploy
                  </button>
                )}
                {!isFinal(revision.status) && (
                  <button
                    type="button"
                    aria-label={`Interrupt revision ${short}`}
                    disabled={busy}
                    onClick={() => act(revision.id, "interrupt")}
                  >
                    Interrupt
                  </button>
                )}
              </div>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
