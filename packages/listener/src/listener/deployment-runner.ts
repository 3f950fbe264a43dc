import type { Logger } from "@berth/service-kit";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type AssignedRevision,
  type Assignment,
  type DeploymentReport,
  type DeploymentType,
  FINAL_REVISION_STATUSES,
  type ObservedDeployment,
  type RevisionStatus,
} from "@berth/listener-protocol";
import type { Scalable, ScaleDimension } from "./autoscaler.js";
import type { ControlPlaneLink } from "./link.js";
import type { LogShipper } from "./log-shipper.js";
import type { Metered, MetricsTarget } from "./metrics-pusher.js";
import { deployErrorOf, type Placement, type Ready, type ScalingState, type Serving } from "./placements/placement.js";
import type { QueueDepth } from "./queue-metrics.js";
import { customUrlOf } from "./revision-spec.js";
import { Abandoned, type Move, type RevisionWork } from "./revision-work.js";

/** What a deployment runner works with. */
export interface RunnerContext {
  link: ControlPlaneLink;
  logs: LogShipper;
  logger: Logger;
  /** Where the listener's revisions run. */
  placement: Placement;
  deploymentsDir: string;
  /** The agent server version every deployment runs (image_version). */
  serverVersion: string;
}

/** A revision a listener finds in one of these without working on it was left behind by a restart: it starts over. */
const RESUMABLE: readonly RevisionStatus[] = ["AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING", "UNKNOWN"];
/** Final statuses the control plane sets on its own (a newer revision, an interrupt): the work stops. */
const STOPPED: readonly RevisionStatus[] = ["SKIPPED", "INTERRUPTED"];

interface Job {
  revisionId: string;
  abort: AbortController;
  /** Settles once the job has ended, whichever way. */
  ended?: Promise<void>;
}

interface JobOptions {
  /** After a listener restart: the deployed revision runs again, with no status change. */
  restore: boolean;
  /** Why the work starts over, for the build log. */
  note?: string;
}

/**
 * Brings one deployment to its desired state through the listener's
 * placement: moves its latest revision through its statuses while the
 * placement prepares and starts it, switches to it once it could serve, lets
 * the previous revision finish its open requests, then stops it.
 */
export class DeploymentRunner implements Scalable, Metered {
  private serving: Serving | undefined;
  /** What the control plane was last told runs (keyOf); undefined: nothing yet since the listener started. */
  private observed: string | undefined;
  private job: Job | undefined;
  private tearingDown: Promise<void> | undefined;
  /** The serving revision's deployment_type, as of the last assignment (the idle sleeper's rule). */
  private deploymentType: DeploymentType | null = null;

  constructor(
    readonly deploymentId: string,
    private readonly context: RunnerContext,
  ) {}

  /** The revision that serves now. */
  servingRevisionId(): string | undefined {
    return this.serving?.revisionId;
  }

  /** Resolves once no revision's work is under way (a job started meanwhile is awaited too). */
  async idle(): Promise<void> {
    while (this.job) await this.job.ended;
  }

  /** What serves, with its deployment_type, while no revision's work is under way; undefined otherwise. */
  settled(): { serving: Serving; deploymentType: DeploymentType | null } | undefined {
    if (this.job || this.tearingDown || !this.serving) return undefined;
    return { serving: this.serving, deploymentType: this.deploymentType };
  }

  reconcile(assignment: Assignment): void {
    this.deploymentType = assignment.active?.spec.deployment_type ?? null;
    if (assignment.deleted) {
      this.tearingDown ??= this.teardown(assignment).catch((error: unknown) => {
        this.tearingDown = undefined; // tried again at the next pass
        this.context.logger.error({ err: error, deployment_id: this.deploymentId }, "tearing a deployment down failed");
      });
      return;
    }
    const latest = assignment.latest;
    if (this.job && (this.job.revisionId !== latest?.id || STOPPED.includes(latest.status))) {
      this.job.abort.abort(new Abandoned());
      this.job = undefined;
    }
    if (this.job || !latest) return;
    if (latest.status === "QUEUED" || RESUMABLE.includes(latest.status)) {
      const note =
        latest.status === "QUEUED" ? undefined : `The listener restarted while the revision was ${latest.status}; starting over`;
      this.startJob(assignment, latest, { restore: false, note });
    } else if (!this.serving && assignment.active?.status === "DEPLOYED") {
      this.startJob(assignment, assignment.active, { restore: true });
    }
    // Nothing to do: what runs (nothing, after a listener start) is reported once.
    if (!this.job && !this.tearingDown) void this.reportObserved();
  }

  scaling(): ScalingState | undefined {
    if (this.job || this.tearingDown) return undefined;
    return this.serving?.scaling();
  }

  openRequests(): number {
    return this.serving?.openRequests() ?? 0;
  }

  queueDepth(): Promise<QueueDepth> {
    return this.serving?.queueDepth() ?? Promise.reject(new Error("no healthy API replica to read the queue from"));
  }

  metricsTargets(): MetricsTarget[] {
    return this.serving?.metricsTargets?.() ?? [];
  }

  async scaleTo(dimension: ScaleDimension, count: number, reason: string): Promise<void> {
    await this.serving?.scaleTo(dimension, count, reason);
  }

  /** Stops everything this runner started (listener shutdown); the deployment resumes at the next start. */
  async stop(): Promise<void> {
    this.job?.abort.abort(new Abandoned());
    this.job = undefined;
    const serving = this.serving;
    this.serving = undefined;
    await serving?.stop();
  }

  private startJob(assignment: Assignment, revision: AssignedRevision, options: JobOptions): void {
    const job: Job = { revisionId: revision.id, abort: new AbortController() };
    this.job = job;
    job.ended = this.run(assignment, revision, options, job.abort.signal)
      .catch((error: unknown) => {
        if (error instanceof Abandoned || job.abort.signal.aborted) return;
        this.context.logger.error(
          { err: error, deployment_id: this.deploymentId, revision_id: revision.id },
          "deploying a revision failed",
        );
      })
      .finally(() => {
        if (this.job !== job) return;
        this.job = undefined;
        void this.reportObserved();
      });
  }

  private async run(assignment: Assignment, revision: AssignedRevision, options: JobOptions, signal: AbortSignal): Promise<void> {
    const { link, logs, placement } = this.context;
    let status = revision.status;
    const move: Move = async (to, message, report, facts) => {
      if (options.restore) return;
      // A client that sees a final status reads complete logs.
      if (FINAL_REVISION_STATUSES.includes(to)) await logs.flush();
      if (signal.aborted || !(await link.transition(revision.id, [status], to, message, report, facts))) throw new Abandoned();
      status = to;
    };
    const buildLog = logs.writer(this.deploymentId, revision.id, "build");
    const work: RevisionWork = { assignment, revision, move, buildLog, signal, restore: options.restore };
    if (options.note) buildLog({ level: "info", message: options.note });
    const adopted = options.restore ? placement.adopt(work) : undefined;
    if (adopted) return this.adopt(adopted);

    const refusal = placement.refusal(work);
    if (refusal) {
      await move("DEPLOY_FAILED", refusal);
      return this.reportIdle(assignment);
    }
    const prepared = await placement.prepare(work);
    if (prepared.kind === "failed") return this.reportIdle(assignment);
    if (prepared.kind === "no-source") return;
    const serving = await this.start(prepared, work).finally(() => prepared.discard());
    if (serving) await this.switchTo(serving, work, options.restore);
  }

  /** Moves the prepared revision to DEPLOYING and starts it; undefined once that failed (DEPLOY_FAILED). */
  private async start(ready: Ready, { assignment, move, signal }: RevisionWork): Promise<Serving | undefined> {
    await move("DEPLOYING", ready.starting);
    try {
      return await ready.start();
    } catch (error) {
      if (signal.aborted) throw new Abandoned();
      await move("DEPLOY_FAILED", deployErrorOf(error, "Starting the agent server failed").message);
      await this.reportIdle(assignment);
      return undefined;
    }
  }

  /**
   * Sends the deployment's requests to the revision, then records it DEPLOYED
   * (with the deployment READY at its URL), so a client told it is deployed
   * reaches it; then retires the revision before it.
   */
  private async switchTo(serving: Serving, { assignment, revision, move }: RevisionWork, restore: boolean): Promise<void> {
    const observed = observationOf(serving);
    const report: DeploymentReport = {
      status: "READY",
      active_revision_id: revision.id,
      // An external image's custom_url is where its users reach it (their own ingress); else the placement's URL.
      custom_url: customUrlOf(revision) ?? serving.url,
      image_version: this.context.serverVersion,
      observed,
    };
    const previous = this.serving;
    serving.activate();
    try {
      await move("DEPLOYED", serving.summary, report, { image_digest: serving.imageDigest });
    } catch (error) {
      // The move lost (the revision was superseded or interrupted meanwhile): what served before serves again.
      if (previous) previous.activate();
      else serving.deactivate();
      await serving.stop();
      throw error;
    }
    this.serving = serving;
    this.observed = keyOf(observed);
    if (restore) await this.context.link.report(assignment.id, report);
    await previous?.retire();
  }

  /** After a listener restart: what still serves the deployed revision serves on. */
  private adopt(serving: Serving): void {
    this.serving = serving;
    serving.activate();
  }

  /** Nothing new serves: the deployment is UNUSED unless an older revision still does. */
  private async reportIdle(assignment: Assignment): Promise<void> {
    if (this.serving || assignment.active_revision_id) return;
    const observed = observationOf(undefined);
    await this.context.link.report(this.deploymentId, { status: "UNUSED", observed });
    this.observed = keyOf(observed);
  }

  /**
   * Tells the control plane what runs when that changed since it was last
   * told (first after a listener start): it recomputes the conditions from it.
   */
  private async reportObserved(): Promise<void> {
    const observed = observationOf(this.serving);
    if (keyOf(observed) === this.observed) return;
    this.observed = keyOf(observed);
    await this.context.link.report(this.deploymentId, { observed }).catch((err: unknown) => {
      this.observed = undefined; // told again at the next pass
      this.context.logger.warn({ err, deployment_id: this.deploymentId }, "reporting what runs failed");
    });
  }

  private async teardown(assignment: Assignment): Promise<void> {
    await this.stop();
    await this.context.placement.remove(assignment);
    await rm(join(this.context.deploymentsDir, this.deploymentId), { recursive: true, force: true });
    await this.context.link.purge(this.deploymentId);
  }
}

/** What serves the deployment, as its conditions read it. */
function observationOf(serving: Serving | undefined): ObservedDeployment {
  if (!serving) return { serving_revision_id: null, healthy: false, reason: "NotServing", message: "No revision runs" };
  if (serving.asleep?.()) {
    const message = "Asleep (since before the listener started): the next request wakes it";
    return { serving_revision_id: serving.revisionId, healthy: true, reason: "Sleeping", message, sleeping: true };
  }
  const healthy = serving.healthy();
  const message = healthy ? serving.summary : "Its servers do not pass their health checks";
  return { serving_revision_id: serving.revisionId, healthy, reason: healthy ? "Healthy" : "Unhealthy", message };
}

/** Which revision serves: what the runner reports on its own (its servers' health comes with their events, supervised-servers.ts). */
function keyOf(observed: ObservedDeployment): string {
  return String(observed.serving_revision_id);
}
