import type { AssignedRevision, Assignment } from "@berth/listener-protocol";

/*
 * What a revision's spec asks of compute, read from an assignment: the
 * control plane types and normalizes the spec once (RevisionSpec);
 * compute checks the Kubernetes shapes it maps.
 */

/**
 * What a deployment_type gives a revision whose resource_spec sets no limits
 * (docs/git-deployments.md, docs/deploying.md): dev_free and dev are sized
 * small, prod is left to the machine (and on local compute to its defaults,
 * see sandbox/limits.ts). Processes and disks (MiB) apply to local compute.
 */
export const DEPLOYMENT_TYPE_LIMITS: Record<
  string,
  { memoryLimitMb: number; cpu: number; processes: number; dataDiskMb: number; tmpDiskMb: number } | undefined
> = {
  dev_free: { memoryLimitMb: 512, cpu: 0.5, processes: 128, dataDiskMb: 512, tmpDiskMb: 256 },
  dev: { memoryLimitMb: 1024, cpu: 1, processes: 256, dataDiskMb: 2048, tmpDiskMb: 1024 },
};

/** resource_spec's limits, as compute applies them (else those of the deployment_type). */
export function resourcesOf(revision: AssignedRevision) {
  const { resources, deployment_type } = revision.spec;
  const preset = deployment_type ? DEPLOYMENT_TYPE_LIMITS[deployment_type] : undefined;
  const storageGi = resources.db_storage_gi;
  return {
    memoryLimitMb: resources.memory_limit_mb ?? preset?.memoryLimitMb ?? null,
    cpu: resources.cpu_limit ?? resources.cpu ?? preset?.cpu ?? null,
    processes: preset?.processes ?? null,
    // The database's storage is the deployment's /data on local compute.
    dataDiskMb: storageGi != null ? storageGi * 1024 : (preset?.dataDiskMb ?? null),
    tmpDiskMb: preset?.tmpDiskMb ?? null,
  };
}

/** resource_spec.volumes and volume_mounts, for container compute to check and map. */
export function volumesOf(revision: AssignedRevision): { volumes: unknown; mounts: unknown } {
  const { volumes, volume_mounts } = revision.spec.resources;
  return { volumes, mounts: volume_mounts };
}

/** resource_spec.init_containers and sidecars, for container compute to check and run. */
export function companionContainersOf(revision: AssignedRevision): { initContainers: unknown; sidecars: unknown } {
  const { init_containers, sidecars } = revision.spec.resources;
  return { initContainers: init_containers, sidecars };
}

/** How many containers serve the revision: resource_spec.min_scale (at least one). */
export function replicasOf(revision: AssignedRevision): number {
  return revision.spec.scale.replicas;
}

/** How far the autoscaler may grow the revision: resource_spec.max_scale (never below min_scale). */
export function maxReplicasOf(revision: AssignedRevision): number {
  return revision.spec.scale.max_replicas;
}

/** What a scale-out deployment runs besides its API replicas (see scaleOutOf). */
export interface ScaleOutPlan {
  workers: number;
  /** How far the autoscaler may grow the workers: queue_max_scale (never below queue_min_scale). */
  maxWorkers: number;
  workerResources: { memoryLimitMb: number | null; cpu: number | null };
  db: { cpu: number | null; memoryLimitMb: number | null; maxConnections: number | null };
  cache: { cpu: number | null; memoryLimitMb: number | null };
}

/**
 * A revision that may run more than one API replica (max_scale above 1)
 * runs in scale-out mode: its replicas cannot share one SQLite file, so the
 * deployment gets a PostgreSQL (db_*) and a Redis (cache_*) container, and
 * runs execute in queue_min_scale worker containers (queue_*), grown toward
 * queue_max_scale by the runs queued.
 */
export function scaleOutOf(revision: AssignedRevision): ScaleOutPlan | undefined {
  const { resources, scale } = revision.spec;
  if (scale.max_replicas <= 1) return undefined;
  return {
    workers: scale.workers,
    maxWorkers: scale.max_workers,
    workerResources: { memoryLimitMb: resources.queue_memory_limit_mb, cpu: resources.queue_cpu_limit ?? resources.queue_cpu },
    db: {
      cpu: resources.db_cpu_limit ?? resources.db_cpu,
      memoryLimitMb: resources.db_memory_limit_mb,
      maxConnections: resources.db_max_connections,
    },
    cache: { cpu: resources.cache_cpu_limit ?? resources.cache_cpu, memoryLimitMb: resources.cache_memory_limit_mb },
  };
}

/** An external image's custom_url: where its users reach it (their own ingress). */
export function customUrlOf(revision: AssignedRevision): string | undefined {
  return revision.spec.custom_url ?? undefined;
}

/** resource_spec.labels and annotations, as container labels (annotations prefixed, so the two cannot collide). */
export function labelsOf(revision: AssignedRevision): Record<string, string> {
  const { labels, annotations } = revision.spec.resources;
  const prefixed = Object.entries(annotations ?? {}).map(([name, value]) => [`annotation.${name}`, value]);
  return { ...labels, ...Object.fromEntries(prefixed) };
}

/**
 * The control plane's services for a deployment's servers: every run traced
 * into its project (the standard LangChain variables), and the Auth Service
 * for its graphs' tokens (@berth/graph-auth), each with its own narrow key.
 */
export function tracingEnvOf(assignment: Assignment, endpoint: string | undefined): Record<string, string> {
  if (!endpoint) return {};
  return {
    LANGSMITH_TRACING: "true",
    LANGSMITH_ENDPOINT: endpoint,
    LANGSMITH_API_KEY: assignment.tracing.api_key,
    LANGSMITH_PROJECT: assignment.tracing.project,
    // The tracing API is at /api/v1 of the control plane; the Auth Service at its root.
    BERTH_AUTH_SERVICE_URL: endpoint.replace(/\/api\/v1\/?$/, ""),
    BERTH_AUTH_SERVICE_KEY: assignment.auth_service.api_key,
  };
}

/** The revision's secrets as environment variables (what its build's graph check and its servers see). */
export function secretEnvOf(revision: AssignedRevision): Record<string, string> {
  return Object.fromEntries(revision.secrets.map(({ name, value }) => [name, value]));
}

/** The key the deployment's servers sign run webhooks with; set by the platform, so no project or secret can choose it. */
export function runWebhookEnvOf(assignment: Assignment): Record<string, string> {
  return assignment.run_webhooks ? { BERTH_WEBHOOK_SECRET: assignment.run_webhooks.secret } : {};
}

/** Where a repo_host revision's source is, as git fetches it. */
export function repositoryOf(repository: NonNullable<AssignedRevision["repository"]>) {
  return {
    url: repository.url,
    ref: repository.ref,
    credentials: repository.credentials ?? undefined,
    allowLocal: repository.allow_local,
  };
}
