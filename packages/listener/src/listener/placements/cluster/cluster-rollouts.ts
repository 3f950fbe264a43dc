import type { KubernetesObject } from "@kubernetes/client-node";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { SERVICES_USERS } from "../../../build/image/scale-out-image.js";
import { applyObjects } from "../../../compute/cluster/apply-objects.js";
import type { ClusterConnection } from "../../../compute/cluster/cluster-connection.js";
import type { ClusterNetworkSettings, ClusterRevision } from "../../../compute/cluster/cluster-revision.js";
import { deleteDeploymentObjects } from "../../../compute/cluster/delete-objects.js";
import { renderRevision, toYaml } from "../../../compute/cluster/render.js";
import { waitForRollout } from "../../../compute/cluster/rollout-status.js";
import { DeployError } from "../../../compute/types.js";
import type { AssignedRevision, Assignment } from "@berth/listener-protocol";
import type { ClusterLogs } from "./cluster-logs.js";
import { parseImageRegistry, plannedRefOf } from "../../image-registry.js";
import type { ControlPlaneLink } from "../../link.js";
import { DEPLOYMENT_TYPE_LIMITS, runWebhookEnvOf, tracingEnvOf, secretEnvOf } from "../../revision-spec.js";
import { deploymentSecretOf } from "../../upstream-key.js";

/** How a cluster listener places deployments (docs/cluster.md). */
export interface ClusterSettings {
  /** The namespace of deployments without listener_config.cluster_namespace. */
  namespace: string;
  /** The cluster has KEDA: queue workers scale on pending runs. */
  keda: boolean;
  /** How long a rollout may take before the revision fails (default 10 minutes). */
  rolloutTimeoutMs: number;
  /** The image of the PostgreSQL and Redis of deployments (default: the scale-out services image's name). */
  servicesImage?: string;
  /** `HOST[:PORT]/PATH`: where built sources' images are pushed for the cluster to pull (none: they are not deployed). */
  imageRegistry?: string;
  /** What the deployments' NetworkPolicy lets in and out (docs/cluster.md#network-policy). */
  network: ClusterNetworkSettings;
}

/**
 * Revisions on a Kubernetes cluster: rendered into objects (compute/cluster/render.ts),
 * applied by server-side apply, followed until the rollout completes or fails with the pod's reason.
 */
export class ClusterRollouts {
  constructor(
    readonly connection: ClusterConnection | undefined,
    private readonly settings: ClusterSettings,
    private readonly deploymentsDir: string,
    /** Where the pods' output goes: the deployments' deploy logs (none when only rendering). */
    readonly podLogs?: ClusterLogs,
  ) {}

  namespaceOf(revision: AssignedRevision): string {
    return revision.spec.cluster_namespace || this.settings.namespace;
  }

  /** Every object the revision needs, as applied (also what `berth listener --render` prints). */
  async render(assignment: Assignment, revision: AssignedRevision, image: string, tracingEndpoint: string | undefined) {
    const env = {
      ...secretEnvOf(revision),
      ...tracingEnvOf(assignment, tracingEndpoint),
      ...runWebhookEnvOf(assignment),
    };
    const dir = join(this.deploymentsDir, assignment.id);
    // Nothing else makes the deployment's directory on a cluster listener (nor for --render): the passwords are kept there.
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const input: ClusterRevision = {
      deploymentId: assignment.id,
      deploymentName: assignment.name,
      revisionId: revision.id,
      revisionNumber: revision.number,
      namespace: this.namespaceOf(revision),
      image,
      berthImage: revision.source === "internal_source" || revision.source === "repo_host",
      env,
      secretReferences: revision.spec.secret_references,
      resourceSpec: revision.spec.resources,
      sizePreset: DEPLOYMENT_TYPE_LIMITS[revision.spec.deployment_type ?? ""],
      network: this.settings.network,
      keda: this.settings.keda,
      passwords: {
        db: await deploymentSecretOf(dir, "postgres.password"),
        cache: await deploymentSecretOf(dir, "redis.password"),
      },
      ...(this.settings.servicesImage ? { servicesImage: this.settings.servicesImage } : {}),
      servicesUsers: SERVICES_USERS,
    };
    return renderRevision(input);
  }

  /** Applies the objects and waits for the rollout; resolves with the API Service's in-cluster URL, throws a DeployError with the reason. */
  async deploy(
    objects: KubernetesObject[],
    revision: AssignedRevision,
    deploymentId: string,
    signal: AbortSignal,
  ): Promise<string> {
    const connection = this.connected();
    const namespace = this.namespaceOf(revision);
    try {
      await applyObjects(connection, objects, { fieldManager: "berth" });
    } catch (error) {
      throw new DeployError(`Applying the revision's objects to the cluster failed: ${(error as Error).message}`);
    }
    const rollout = await waitForRollout(connection, namespace, deploymentId, revision.id, {
      timeoutMs: this.settings.rolloutTimeoutMs,
      pollMs: 2000,
      signal,
    });
    if (rollout.state !== "ready") throw new DeployError(rollout.reason);
    const service = objects.find(
      (object) => object.kind === "Service" && object.metadata?.labels?.["berth.dev/component"] === "api",
    );
    return `http://${service?.metadata?.name}.${namespace}.svc:8000`;
  }

  async remove(deploymentId: string, namespace: string): Promise<void> {
    this.podLogs?.forget(deploymentId);
    await deleteDeploymentObjects(this.connected(), namespace, deploymentId);
  }

  private connected(): ClusterConnection {
    if (!this.connection) throw new DeployError("This listener renders for a cluster but is connected to none");
    return this.connection;
  }
}

/**
 * `berth listener --render`: every object the listener would apply for the
 * deployment's latest revision, as multi-document YAML, without a cluster. A
 * built source's image is the reference the listener pushes its build as
 * (image-registry.ts), derived without building or pushing.
 */
export async function renderForReview(
  link: ControlPlaneLink,
  deploymentId: string,
  settings: ClusterSettings,
  deploymentsDir: string,
): Promise<string> {
  const assignment = (await link.assignments()).find((candidate) => candidate.id === deploymentId);
  const revision = assignment?.latest;
  if (!assignment || !revision) throw new Error(`Deployment ${deploymentId} is not one of this listener's, or has no revision`);
  let image: string;
  if (revision.source === "external_image") {
    image = String(revision.spec.image_uri);
  } else if (revision.source === "internal_source" || revision.source === "repo_host") {
    if (!settings.imageRegistry)
      throw new Error(
        `deployment ${deploymentId} is ${revision.source}: its image is pushed to --image-registry HOST[:PORT]/PATH (BERTH_CLUSTER_IMAGE_REGISTRY), which names it`,
      );
    image = await plannedRefOf(parseImageRegistry(settings.imageRegistry), assignment, revision);
  } else {
    throw new Error(
      `A cluster listener deploys external_image, internal_source and repo_host revisions; deployment ${deploymentId} is ${revision.source}`,
    );
  }
  const rollouts = new ClusterRollouts(undefined, settings, deploymentsDir);
  return toYaml(await rollouts.render(assignment, revision, image, link.tracingEndpoint()));
}
