/*
 * What a cluster listener renders for one revision of a deployment (see
 * render.ts), and the labels and names that mark the objects as Berth's:
 * the code that applies and prunes them finds them by the same labels.
 */

/** One revision of a deployment, as the cluster renderer needs it. Pure data: the renderer reads nothing else. */
export interface ClusterRevision {
  /** The deployment's uuid; object names derive from it (see clusterNamesOf). */
  deploymentId: string;
  /** The deployment's name (letters, digits, '-'), for app.kubernetes.io/name. */
  deploymentName: string;
  revisionId: string;
  revisionNumber: number;
  /** listener_config.cluster_namespace, else the listener's namespace. */
  namespace: string;
  /** The image to run: Berth's revision image, or the user's external image. */
  image: string;
  /** True when the image runs `berth serve` (honours BERTH_ROLE=api|worker, listens on PORT=8000, answers GET /ok). */
  berthImage: boolean;
  /** The deployment's secrets and the platform's variables: rendered into a Secret, never inline in a pod spec. */
  env: Record<string, string>;
  /** Variables read from existing secrets of the namespace (secretKeyRef). The deployment's own env wins on a clash. */
  secretReferences: { name: string; secret_name: string; secret_key: string }[];
  /** The normalized resource_spec (every field of the spec's ResourceSpec, null when not set), or null. */
  resourceSpec: Record<string, unknown> | null;
  /** The deployment_type's size (dev_free, dev), for the servers when resource_spec sets none. */
  sizePreset?: { memoryLimitMb: number; cpu: number };
  /** Who may reach the deployment's pods, and what they may reach (render-network.ts); defaults when not given. */
  network?: ClusterNetworkSettings;
  /** The cluster runs KEDA: the workers scale on pending runs (ScaledObject) rather than on CPU (HPA). */
  keda: boolean;
  /** The passwords of the deployment's PostgreSQL and Redis, generated and kept by the listener (rendering stays pure). */
  passwords: { db: string; cache: string };
  /** A database of the user's: no PostgreSQL is rendered, and DATABASE_URL is this URL. */
  externalDatabaseUrl?: string;
  /** The image with `berth-postgres` and `berth-redis` (default SERVICES_IMAGE). */
  servicesImage?: string;
  /**
   * The numeric users PostgreSQL and Redis run as in servicesImage. Kubernetes takes no user names and
   * PostgreSQL refuses to run as root, so the image must give them fixed ids; without this the image's user runs.
   */
  servicesUsers?: { db: number; cache: number };
}

/** Where the platform runs in the cluster, and what deployments may not reach (docs/cluster.md#network-policy). */
export interface ClusterNetworkSettings {
  /** The namespace of the control plane, its router and the listener: the API pods take requests from it. */
  platformNamespace: string;
  /** Namespaces of ingress controllers in front of deployments (custom_url): the API pods take requests from them too. */
  ingressNamespaces: string[];
  /** The namespace of KEDA's operator, whose scaler reads the database (when the cluster has KEDA). */
  kedaNamespace: string;
  /** CIDRs pods may not reach besides the private ranges: the cluster's pod and service CIDRs when they are outside them. */
  blockedCidrs: string[];
}

export const DEFAULT_NETWORK_SETTINGS: ClusterNetworkSettings = {
  platformNamespace: "berth",
  ingressNamespaces: [],
  kedaNamespace: "keda",
  blockedCidrs: [],
};

/** The PostgreSQL and Redis image's default name (the docker listener tags it by content; a cluster pulls it by this name). */
export const SERVICES_IMAGE = "berth/scale-out-services:latest";

export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const LABEL_NAME = "app.kubernetes.io/name";
export const LABEL_DEPLOYMENT = "berth.dev/deployment";
export const LABEL_REVISION = "berth.dev/revision";
export const LABEL_COMPONENT = "berth.dev/component";
/** The value of LABEL_MANAGED_BY on every object Berth renders. */
export const MANAGED_BY_BERTH = "berth";

/** What part of a deployment an object belongs to (LABEL_COMPONENT). */
export type ClusterComponent = "api" | "queue" | "db" | "cache";

/** The label selector of every object of a deployment, for listing and pruning them. */
export function ownershipSelectorOf(deploymentId: string): string {
  return `${LABEL_MANAGED_BY}=${MANAGED_BY_BERTH},${LABEL_DEPLOYMENT}=${deploymentId}`;
}

/** The names of a deployment's objects: the same for every revision, so a new revision updates them in place. */
export interface ClusterNames {
  api: string;
  queue: string;
  db: string;
  cache: string;
  /** The Secret with the deployment's env. */
  env: string;
  /** The Secret with the PostgreSQL and Redis passwords (and the workers' scaler connection). */
  credentials: string;
}

/** Names from the deployment id's first 8 letters and digits: valid DNS-1123 labels whatever the rest. */
export function clusterNamesOf(deploymentId: string): ClusterNames {
  const short = deploymentId
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "")
    .slice(0, 8);
  if (short.length < 8) throw new Error(`A deployment id needs at least 8 letters or digits, not "${deploymentId}"`);
  const base = `berth-${short}`;
  return {
    api: `${base}-api`,
    queue: `${base}-queue`,
    db: `${base}-db`,
    cache: `${base}-cache`,
    env: `${base}-env`,
    credentials: `${base}-db-credentials`,
  };
}
