import type { Assignment } from "@berth/listener-protocol";
import { DeployError } from "../../compute/types.js";
import type { DimensionState, ScaleDimension } from "../autoscaler.js";
import type { MetricsTarget } from "../metrics-pusher.js";
import type { QueueDepth } from "../queue-metrics.js";
import type { RevisionWork } from "../revision-work.js";

/**
 * Where a listener runs its revisions: local processes, containers or a
 * cluster, one folder each under placements/, chosen once where the listener
 * starts. The deployment runner moves the revision through its statuses; the
 * placement does the work of each step.
 */
export interface Placement {
  /** Why this placement does not run the revision (its source); undefined when it does. */
  refusal(work: RevisionWork): string | undefined;
  /** Builds, finds or names what the revision runs, moving it on to AWAITING_DEPLOY (or to a failed status). */
  prepare(work: RevisionWork): Promise<Preparation>;
  /** After a listener restart: what still serves the deployed revision unstarted (a cluster's pods); undefined: start it again. */
  adopt(work: RevisionWork): Serving | undefined;
  /** What the deleted deployment had here besides its directory: containers, images, cluster objects, cgroups, routes. */
  remove(assignment: Assignment): Promise<void>;
  /** The deployment is no longer this listener's (purged, or moved to another): its builds here go. */
  forget(deploymentId: string): Promise<void>;
  /** Stops everything it runs (the listener closes; the deployments resume at its next start). */
  close(): Promise<void>;
}

/** What prepare leaves. */
export type Preparation =
  | Ready
  /** Moved to BUILD_FAILED or DEPLOY_FAILED, with the reason logged. */
  | { kind: "failed" }
  /** Moved to BUILD_FAILED: the revision has no source to build; the deployment's status stays as it is. */
  | { kind: "no-source" };

/** A prepared revision, ready to start. */
export interface Ready {
  kind: "ready";
  /** What the DEPLOYING move says. */
  starting: string;
  /** Starts (or takes over) its servers; resolves once they could serve, throws a DeployError with the reason. */
  start(): Promise<Serving>;
  /** Stops what preparing started when start() never took it over (the work failed or was abandoned first). */
  discard(): Promise<void>;
}

/** A revision's size for the autoscaler: its API replicas and, in scale-out mode, its workers. */
export interface ScalingState {
  replicas: DimensionState;
  workers?: DimensionState & { slotsPerWorker: number };
}

/** A started revision: what serves it, and how traffic reaches it. */
export interface Serving {
  readonly revisionId: string;
  /** What the DEPLOYED move says. */
  readonly summary: string;
  /** Where users reach the deployment when the revision names no custom_url (empty for one adopted after a restart). */
  readonly url: string;
  /** The image it runs, recorded on the revision. */
  readonly imageDigest: string | undefined;
  /**
   * It becomes what serves the deployment: the router sends it the new
   * requests (those sent elsewhere finish there); a cluster's Service does so
   * on its own, and its pods' output is followed.
   */
  activate(): void;
  /** It no longer serves, and none took its place (its DEPLOYED move lost): the deployment's URL answers as before. */
  deactivate(): void;
  /** Whether its servers pass their health checks now. */
  healthy(): boolean;
  /** Whether its servers are stopped for lack of requests (local compute); absent where nothing sleeps. */
  asleep?(): boolean;
  /** Lets it finish its open requests (another revision serves now), then stops it. */
  retire(): Promise<void>;
  /** Stops it now. */
  stop(): Promise<void>;
  /** Its size for the autoscaler; undefined when it does not scale. */
  scaling(): ScalingState | undefined;
  /** Requests in flight to it. */
  openRequests(): number;
  /** Runs pending and running on its database; rejects when they cannot be read. */
  queueDepth(): Promise<QueueDepth>;
  scaleTo(dimension: ScaleDimension, count: number, reason: string): Promise<void>;
  /** Its servers whose /metrics the listener reads and sends on; absent where none can be reached (a cluster's pods). */
  metricsTargets?(): MetricsTarget[];
}

/** A start's failure as the DEPLOY_FAILED reason: a DeployError's message, else `what failed: message`. */
export function deployErrorOf(error: unknown, what: string): DeployError {
  return error instanceof DeployError ? error : new DeployError(`${what}: ${(error as Error).message}`);
}
