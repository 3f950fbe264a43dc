import { ConflictError, NotFoundError } from "@berth/service-kit";
import { FINAL_REVISION_STATUSES, IN_PROGRESS_REVISION_STATUSES } from "@berth/listener-protocol";
import type { ControlPlaneStorage, RevisionFilter } from "../storage/types.js";
import { notFound } from "./deployments.js";
import { type ChangeFeed, recheckMs, wakeups } from "./change-feed.js";
import {
  presentRevisionsWithConditions,
  presentRevisionWithConditions,
  type Revision,
  recordConditions,
  timelineOf,
} from "./status-conditions.js";

/** A long-poll reads again this often, for moves another control-plane process made unheard (SQLite). */
const RECHECK_MS = 250;

export class RevisionService {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly changes: ChangeFeed,
  ) {}

  async list(tenantId: string, deploymentId: string, filter: RevisionFilter): Promise<{ resources: Revision[]; offset: number }> {
    const deployment = await this.storage.deployments.get(tenantId, deploymentId);
    if (!deployment) throw notFound(deploymentId);
    const revisions = await this.storage.revisions.list(tenantId, deploymentId, filter);
    const resources = await presentRevisionsWithConditions(this.storage, deployment, revisions);
    return { resources, offset: filter.offset + revisions.length };
  }

  /**
   * The revision, once it is final (or, with `whileStatus`, once its status
   * is another) or `waitSeconds` have passed: a long poll, so clients need
   * not invent polling loops.
   */
  async wait(
    tenantId: string,
    deploymentId: string,
    revisionId: string,
    waitSeconds: number,
    whileStatus?: string,
  ): Promise<Revision> {
    const deadline = Date.now() + waitSeconds * 1000;
    const moves = wakeups(this.changes, { revision: (event) => event.revision.id === revisionId });
    try {
      for (;;) {
        // Each recheck reads the status only; the conditions are derived once, for the answer.
        const { deployment, revision } = await this.records(tenantId, deploymentId, revisionId);
        const left = deadline - Date.now();
        const changed = whileStatus ? revision.status !== whileStatus : FINAL_REVISION_STATUSES.includes(revision.status);
        if (left <= 0 || changed) return presentRevisionWithConditions(this.storage, deployment, revision);
        await moves.next(Math.min(left, recheckMs(this.changes, RECHECK_MS)));
      }
    } finally {
      moves.close();
    }
  }

  async get(tenantId: string, deploymentId: string, revisionId: string): Promise<Revision> {
    const { deployment, revision } = await this.records(tenantId, deploymentId, revisionId);
    return presentRevisionWithConditions(this.storage, deployment, revision);
  }

  private async records(tenantId: string, deploymentId: string, revisionId: string) {
    const deployment = await this.storage.deployments.get(tenantId, deploymentId);
    if (!deployment) throw notFound(deploymentId);
    const revision = await this.storage.revisions.get(tenantId, deploymentId, revisionId);
    if (!revision) throw new NotFoundError(`Revision ${revisionId} not found`);
    return { deployment, revision };
  }

  /** Stops a revision in progress: it ends INTERRUPTED and its listener abandons the work. */
  async interrupt(tenantId: string, deploymentId: string, revisionId: string): Promise<Revision> {
    const deployment = await this.storage.deployments.get(tenantId, deploymentId);
    if (!deployment) throw notFound(deploymentId);
    const revision = await this.get(tenantId, deploymentId, revisionId);
    const now = new Date().toISOString();
    const moved = await this.storage.revisions.transition(
      revisionId,
      [...IN_PROGRESS_REVISION_STATUSES],
      "INTERRUPTED",
      "Interrupted on request",
      now,
    );
    if (!moved)
      throw new ConflictError(`Revision ${revisionId} is ${revision.status}: only a revision in progress can be interrupted`);
    await recordConditions(this.storage, deploymentId, [moved.id], undefined, now);
    this.changes.publish("deployment", { change: "updated", deployment_id: deploymentId });
    this.changes.publish("revision", {
      kind: "status",
      deployment: { id: deployment.id, name: deployment.name },
      revision: { id: moved.id, number: moved.number },
      status: moved.status,
      previous: revision.status,
      message: moved.status_message,
      url: null,
    });
    return presentRevisionWithConditions(this.storage, deployment, moved);
  }

  async events(tenantId: string, deploymentId: string, revisionId: string) {
    await this.get(tenantId, deploymentId, revisionId);
    const events = await timelineOf(this.storage, revisionId);
    return { resources: events, offset: events.length };
  }
}
