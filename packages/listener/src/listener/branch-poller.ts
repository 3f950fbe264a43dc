import type { Logger } from "@berth/service-kit";
import { remoteHead } from "../build/git/fetch.js";
import type { Assignment } from "@berth/listener-protocol";
import { IN_PROGRESS_REVISION_STATUSES } from "@berth/listener-protocol";
import type { ControlPlaneLink } from "./link.js";
import { repositoryOf } from "./revision-spec.js";

/**
 * For git hosts that cannot reach the control plane with webhooks: the
 * listener asks the host for the head of each build_on_push deployment's
 * tracked branch, and tells the control plane when it moved (it makes the
 * revision, exactly as for a push webhook). Moved means: another head than
 * the last one seen, not another commit than the serving one, so a rollback
 * to an older commit stays until the next push. A deployment with a revision
 * in progress is left alone until it ends; a host that does not answer is
 * asked again at the next round.
 */
export class BranchPoller {
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** Per deployment, the head the last round saw (before the first, the latest revision's commit). */
  private readonly lastHeads = new Map<string, string>();

  constructor(
    private readonly intervalMs: number,
    private readonly link: ControlPlaneLink,
    private readonly assignments: () => readonly Assignment[],
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.polling ??= this.pollOnce().finally(() => (this.polling = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
  }

  private async pollOnce(): Promise<void> {
    const assignments = this.assignments();
    const tracked = new Set(assignments.map((assignment) => assignment.id));
    for (const id of this.lastHeads.keys()) if (!tracked.has(id)) this.lastHeads.delete(id);
    for (const assignment of assignments) {
      const latest = assignment.latest;
      const repository = latest?.spec.repository;
      if (assignment.deleted || !latest || !repository || !latest.spec.build_on_push) continue;
      if (IN_PROGRESS_REVISION_STATUSES.includes(latest.status)) continue;
      try {
        const head = await remoteHead(repositoryOf(repository));
        const lastSeen = this.lastHeads.get(assignment.id) ?? latest.spec.repo_commit_sha;
        if (head && head !== lastSeen) await this.link.branchMoved(assignment.id, head);
        if (head) this.lastHeads.set(assignment.id, head);
      } catch (err) {
        this.logger.warn({ err, deployment_id: assignment.id }, "polling a tracked branch failed");
      }
    }
  }
}
