import type { Logger } from "@berth/service-kit";
import type { SupervisedCompute } from "../compute/supervised-compute.js";
import type { DeploymentReport, RevisionFacts } from "@berth/listener-protocol";
import type { RevisionStatus } from "@berth/listener-protocol";
import type { Router } from "../router/router.js";
import type { ArtifactStore } from "./artifacts.js";
import type { ClusterImages, PushedImage } from "./cluster-images.js";
import type { ClusterRollouts } from "./cluster-rollouts.js";
import type { ImageBuilds } from "./image-builds.js";
import type { ControlPlaneLink } from "./link.js";
import type { LogShipper } from "./log-shipper.js";
import type { ScaleOutServices } from "./scale-out.js";
import type { SecretSource } from "./secret-source.js";

/** What a deployment runner works with: the listener's link, compute, builds, router and logs. */
export interface RunnerContext {
  link: ControlPlaneLink;
  compute: SupervisedCompute;
  /** On a container listener: revisions are built into images and run as containers. */
  images?: ImageBuilds;
  /** On a cluster listener: revisions become Kubernetes objects applied to the cluster. */
  cluster?: ClusterRollouts;
  /** On a cluster listener: the registry built images are pushed to (built with `images`, as on a docker listener). */
  clusterImages?: ClusterImages;
  /** On a container listener: the PostgreSQL and Redis of scale-out deployments. */
  scaleOut?: ScaleOutServices;
  /** The operator's secrets, for external images' secret_references and image_pull_secrets. */
  secrets: SecretSource;
  router: Router;
  /** On a local listener: frees a deleted deployment's cgroups and disks (before its directory goes). */
  resources?: { release(deploymentId: string): Promise<void> };
  artifacts: ArtifactStore;
  logs: LogShipper;
  logger: Logger;
  dirs: { sources: string; installCache: string; deployments: string; gitCache: string };
  /** How long an old revision may finish its open requests after a switch. */
  drainTimeoutMs: number;
  /** The agent server version every deployment runs (image_version). */
  serverVersion: string;
}

/** The work on a revision was abandoned: the control plane moved it (superseded, interrupted) or the listener stops. */
export class Abandoned extends Error {}

/** What a revision runs: a built project (configFile) or, on a container listener, an image. */
export interface Prepared {
  configFile: string;
  image?: string;
  reused: boolean;
  /** The user's own image (external_image), pulled rather than built. */
  external?: boolean;
  /** The build key of a built source. */
  key?: string;
  /** On a cluster listener: the build is in the registry already (pushed for an earlier revision). */
  pushed?: PushedImage;
}

export type LogWriter = ReturnType<RunnerContext["logs"]["writer"]>;

/** Moves the revision (compare-and-set from where the work found it); throws Abandoned when it was moved meanwhile. */
export type Move = (to: RevisionStatus, message: string, report?: DeploymentReport, facts?: RevisionFacts) => Promise<void>;
