import type { DeploymentStatus, RevisionStatus } from "@berth/listener-protocol";

type Tone = "good" | "bad" | "idle" | "busy";

/** The tone of every status the control plane answers: a status the protocol gains has no badge until it is placed here. */
const TONES: Record<DeploymentStatus | RevisionStatus, Tone> = {
  DEPLOYED: "good",
  READY: "good",
  CREATE_FAILED: "bad",
  BUILD_FAILED: "bad",
  DEPLOY_FAILED: "bad",
  INTERRUPTED: "bad",
  UNKNOWN: "bad",
  SKIPPED: "idle",
  UNUSED: "idle",
  AWAITING_DELETE: "idle",
  CREATING: "busy",
  QUEUED: "busy",
  AWAITING_BUILD: "busy",
  BUILDING: "busy",
  AWAITING_DEPLOY: "busy",
  DEPLOYING: "busy",
  AWAITING_DATABASE: "busy",
};

/** A status as its own word; the colour only repeats what the word says. */
export function StatusBadge({ status }: { status: DeploymentStatus | RevisionStatus | undefined }) {
  if (!status) return <span className="badge">—</span>;
  return <span className={`badge ${TONES[status]}`}>{status}</span>;
}
