import { type Deployment, holds, type Revision } from "../api/types";

/** A revision's number in its deployment (1 for the first): every condition records it as its `observed_generation`. */
export function revisionNumber(revision: Revision): number | undefined {
  return revision.conditions[0]?.observed_generation;
}

/** What the page says when the latest revision did not go live but an earlier one still takes the traffic. */
export interface StillServing {
  latest: Revision;
  serving: Revision;
}

/**
 * The latest revision failed (or was interrupted) while an earlier one, tagged serving by its conditions, still
 * serves the deployment's URL: the developer sees the old code answer, and should know why.
 */
export function stillServing(deployment: Deployment, revisions: Revision[]): StillServing | undefined {
  const latest = revisions.find((revision) => revision.id === deployment.latest_revision_id);
  if (!latest || !(latest.status.endsWith("_FAILED") || latest.status === "INTERRUPTED")) return undefined;
  const serving = revisions.find((revision) => revision.id !== latest.id && holds(revision, "Serving"));
  return serving ? { latest, serving } : undefined;
}
