import type { Assignment } from "@berth/listener-protocol";
import type { Logger } from "@berth/service-kit";
import type { Owner } from "../sandbox/isolation.js";
import type { DeploymentRunner } from "./deployment-runner.js";
import type { ControlPlaneLink } from "./link.js";
import type { Placement } from "./placements/placement.js";

/** Whose each assigned deployment and revision is: builds and sandboxes are per deployment, workspaces kept apart. */
export class DeploymentOwners {
  private readonly revisionOwners = new Map<string, string>();
  private readonly tenants = new Map<string, string>();

  note(assignment: Assignment): void {
    this.tenants.set(assignment.id, assignment.tenant_id);
    for (const revision of [assignment.latest, assignment.active])
      if (revision) this.revisionOwners.set(revision.id, assignment.id);
  }

  forget(deploymentId: string): void {
    this.tenants.delete(deploymentId);
  }

  readonly tenantOf = (deploymentId: string): string | undefined => this.tenants.get(deploymentId);

  readonly ownerOf = (revisionId: string): Owner | undefined => {
    const deploymentId = this.revisionOwners.get(revisionId);
    const tenantId = deploymentId && this.tenants.get(deploymentId);
    return deploymentId && tenantId ? { deploymentId, tenantId } : undefined;
  };
}

export interface ReconcileLoopOptions {
  link: ControlPlaneLink;
  logger: Logger;
  placement: Placement;
  owners: DeploymentOwners;
  /** The runner of each assigned deployment, made by `runnerOf` on first sight. */
  runners: Map<string, DeploymentRunner>;
  runnerOf(deploymentId: string): DeploymentRunner;
  /** How often desired state is read. */
  pollMs: number;
}

/** A pass waits at least this many times its own duration before the next poll: reconciling many deployments stays a small share of the CPU. */
const POLL_TO_PASS = 10;

/**
 * Reads the listener's assignments and hands each to its deployment's runner;
 * stops the runners of deployments no longer assigned. One pass at a time,
 * every `pollMs` (or ten times as long as the last pass took, when longer);
 * a wake makes one as soon as the last pass is as long over as it took.
 */
export class ReconcileLoop {
  /** The assignments of the last pass. */
  known: Assignment[] = [];
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  /** How long the last pass took, and when it ended (performance.now()). */
  private passMs = 0;
  private endedAt = 0;

  constructor(private readonly options: ReconcileLoopOptions) {}

  /** Reads desired state now rather than at the next poll (or once the last pass is as long over as it took). */
  readonly wake = (): void => {
    if (this.closed) return;
    if (this.passing) return void (this.again = true);
    clearTimeout(this.timer);
    // Changes in a burst (many deployments made at once) cost a pass each at most half the time.
    const wait = this.endedAt + this.passMs - performance.now();
    if (wait > 0) this.timer = setTimeout(this.passNow, wait);
    else this.passNow();
  };

  private readonly passNow = (): void => {
    if (this.closed) return;
    const started = performance.now();
    this.passing = this.pass()
      .catch((err: unknown) => this.options.logger.warn({ err }, "reconciling failed; trying again"))
      .finally(() => {
        this.endedAt = performance.now();
        this.passMs = this.endedAt - started;
        this.passing = undefined;
        if (this.closed) return;
        if (this.again) {
          this.again = false;
          return this.wake();
        }
        this.timer = setTimeout(this.wake, Math.max(this.options.pollMs, POLL_TO_PASS * this.passMs));
      });
  };

  /** Stops the loop, then every runner (the deployments resume at the listener's next start). */
  async stop(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.passing;
    await Promise.all([...this.options.runners.values()].map((runner) => runner.stop()));
  }

  private async pass(): Promise<void> {
    const { link, owners, runners, placement } = this.options;
    const assignments = await link.assignments();
    this.known = assignments;
    for (const assignment of assignments) {
      let runner = runners.get(assignment.id);
      if (!runner) runners.set(assignment.id, (runner = this.options.runnerOf(assignment.id)));
      owners.note(assignment);
      runner.reconcile(assignment);
    }
    const assigned = new Set(assignments.map((assignment) => assignment.id));
    for (const [id, runner] of runners) {
      if (assigned.has(id)) continue; // purged, or moved to another listener
      runners.delete(id);
      await runner.stop();
      await placement.forget(id);
      owners.forget(id);
    }
  }
}
