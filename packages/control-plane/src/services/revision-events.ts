import type { RevisionStatus } from "@berth/listener-protocol";

/** Why a revision was made: a new deployment, a PATCH, `POST …/revisions`, a redeploy of an older one, a git push. */
export type RevisionCause = "create" | "patch" | "rebuild" | "redeploy" | "push";

interface RevisionEventBase {
  deployment: { id: string; name: string };
  revision: { id: string; number: number };
  status: RevisionStatus;
  message: string;
}

/** A revision was made, or its status moved (a listener's report, an interrupt). */
export type RevisionEvent =
  | (RevisionEventBase & { kind: "created"; cause: RevisionCause })
  | (RevisionEventBase & {
      kind: "status";
      previous: RevisionStatus;
      /** Where the deployment is served, when the move reports it (DEPLOYED). */
      url: string | null;
    });

export type RevisionEventListener = (event: RevisionEvent) => void;

/**
 * Revisions' lives as this process sees them, for whoever wants to tell
 * them (the CLI's terminal lines). Moves made by another control-plane
 * process are not heard here.
 */
export class RevisionEvents {
  private readonly listeners = new Set<RevisionEventListener>();

  subscribe(listener: RevisionEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A listener that throws does not fail the request or the move it is told of. */
  emit(event: RevisionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // telling is best effort
      }
    }
  }
}
