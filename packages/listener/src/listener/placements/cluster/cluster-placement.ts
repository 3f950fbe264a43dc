import type { AssignedRevision, Assignment } from "@berth/listener-protocol";
import { connectCluster } from "../../../compute/cluster/cluster-connection.js";
import type { Isolation } from "../../../sandbox/isolation.js";
import type { ArtifactStore } from "../../artifacts.js";
import { parseImageRegistry } from "../../image-registry.js";
import type { RevisionPreparation } from "../../revision-preparation.js";
import type { RevisionWork } from "../../revision-work.js";
import { deployErrorOf, type Placement, type Preparation, type Ready, type Serving } from "../placement.js";
import { buildsOf, type PlacementContext, startSandbox } from "../placement-context.js";
import { pushedBuildOf } from "./cluster-builds.js";
import { type ClusterImages, connectClusterImages } from "./cluster-images.js";
import { ClusterLogs } from "./cluster-logs.js";
import { ClusterRollouts, type ClusterSettings } from "./cluster-rollouts.js";

const SOURCES = ["external_image", "internal_source", "repo_host"];

export interface ClusterPlacementOptions extends ClusterSettings {
  kubeconfig?: string;
  /** The kubeconfig's context (default: its current one). */
  context?: string;
  /** The engine that builds internal_source and repo_host revisions before they are pushed to the image registry. */
  engine?: string;
  /** How often the deployments' pod logs are read into their deploy logs. */
  logPollMs: number;
}

export interface ClusterParts {
  rollouts: ClusterRollouts;
  images: ClusterImages;
  podLogs: ClusterLogs;
  isolation: Isolation;
}

/**
 * Revisions on a Kubernetes cluster: an external image as it is, a built
 * source's image pushed to the listener's registry; rendered into objects,
 * applied, and followed until the rollout completes or fails with the pod's
 * reason. The cluster's Services route to them, and run them on across a
 * listener restart.
 */
export class ClusterPlacement implements Placement {
  private readonly artifacts: ArtifactStore;
  private readonly preparation: RevisionPreparation;

  constructor(
    private readonly context: PlacementContext,
    private readonly parts: ClusterParts,
  ) {
    ({ artifacts: this.artifacts, preparation: this.preparation } = buildsOf(context, parts.isolation));
  }

  refusal({ revision }: RevisionWork): string | undefined {
    if (SOURCES.includes(revision.source)) return undefined;
    return `This cluster listener deploys external_image, internal_source and repo_host revisions, not ${revision.source}`;
  }

  async prepare(work: RevisionWork): Promise<Preparation> {
    const { revision, move } = work;
    if (revision.source === "external_image") {
      const image = String(revision.spec.image_uri);
      await move("AWAITING_DEPLOY", `An image for the cluster (${image}): nothing to build`);
      return this.ready(work, image, undefined);
    }
    const pushed = await pushedBuildOf(work, this.preparation, this.parts.images);
    if (pushed.kind === "failed") return pushed;
    return this.ready(work, pushed.image.ref, pushed.image.imageId);
  }

  /** After a listener restart the cluster still runs what it ran. */
  adopt({ assignment, revision }: RevisionWork): Serving {
    return this.serving(assignment.id, revision, { summary: this.summaryOf(revision), url: "", imageDigest: undefined });
  }

  async remove(assignment: Assignment): Promise<void> {
    const placed = assignment.active ?? assignment.latest;
    if (placed) await this.parts.rollouts.remove(assignment.id, this.parts.rollouts.namespaceOf(placed));
    await this.parts.images.removeAll(assignment.id);
    await this.parts.images.removeLocal(assignment.id);
  }

  forget(deploymentId: string): Promise<void> {
    return this.artifacts.forget(deploymentId);
  }

  async close(): Promise<void> {
    await this.parts.podLogs.stop();
    await this.parts.isolation.close();
  }

  private ready(work: RevisionWork, image: string, imageId: string | undefined): Ready {
    const namespace = this.parts.rollouts.namespaceOf(work.revision);
    return {
      kind: "ready",
      starting: `Applying the revision's objects in namespace ${namespace}`,
      start: () => this.start(work, image, imageId),
      discard: async () => {},
    };
  }

  private async start(
    { assignment, revision, signal }: RevisionWork,
    image: string,
    imageId: string | undefined,
  ): Promise<Serving> {
    const { rollouts } = this.parts;
    let url: string;
    try {
      const objects = await rollouts.render(assignment, revision, image, this.context.link.tracingEndpoint());
      url = await rollouts.deploy(objects, revision, assignment.id, signal);
    } catch (error) {
      throw deployErrorOf(error, "Deploying failed");
    }
    return this.serving(assignment.id, revision, { summary: this.summaryOf(revision), url, imageDigest: imageId });
  }

  private summaryOf(revision: AssignedRevision): string {
    return `Serving on the cluster (revision ${revision.number}, namespace ${this.parts.rollouts.namespaceOf(revision)})`;
  }

  /** The cluster serves the revision: its pods' output goes to its deploy log. */
  private serving(
    deploymentId: string,
    revision: AssignedRevision,
    { summary, url, imageDigest }: Pick<Serving, "summary" | "url" | "imageDigest">,
  ): Serving {
    const { podLogs, rollouts } = this.parts;
    return {
      revisionId: revision.id,
      summary,
      url,
      imageDigest,
      activate: () => podLogs.follow(deploymentId, revision.id, rollouts.namespaceOf(revision)),
      deactivate: () => podLogs.forget(deploymentId),
      // The cluster's own rollout replaced or keeps the pods: nothing here runs them.
      healthy: () => true,
      retire: async () => {},
      stop: async () => {},
      scaling: () => undefined,
      openRequests: () => 0,
      queueDepth: () => Promise.reject(new Error("a cluster's deployments scale in the cluster")),
      scaleTo: async () => {},
    };
  }
}

/** The cluster placement: connected to the cluster (and to the engine its builds are made on), registry checked. */
export async function startClusterPlacement(
  context: PlacementContext,
  options: ClusterPlacementOptions,
): Promise<ClusterPlacement> {
  const { dirs, logs, logger, secrets } = context;
  // A wrong registry stops the listener before it runs anything.
  const registry = options.imageRegistry ? parseImageRegistry(options.imageRegistry) : undefined;
  const isolation = await startSandbox(context);
  // Sources are built into images as on a docker listener, and pushed to --image-registry.
  const images = await connectClusterImages(registry, options.engine, dirs.imageBuilds, secrets, logger);
  const connection = connectCluster({ kubeconfig: options.kubeconfig, context: options.context });
  const podLogs = new ClusterLogs(connection, logs, logger, options.logPollMs);
  const rollouts = new ClusterRollouts(connection, options, dirs.deployments, podLogs);
  return new ClusterPlacement(context, { rollouts, images, podLogs, isolation });
}
