import type { AssignedRevision, Assignment } from "@berth/listener-protocol";

/*
 * What a revision's source_config asks of compute (resource_spec and
 * custom_url), read from an assignment. Compute checks the shapes it maps.
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
  const spec = revision.source_config.resource_spec as Record<string, number | null> | null | undefined;
  const preset = DEPLOYMENT_TYPE_LIMITS[String(revision.source_config.deployment_type)];
  const storageGi = spec?.db_storage_gi;
  return {
    memoryLimitMb: spec?.memory_limit_mb ?? preset?.memoryLimitMb ?? null,
    cpu: spec?.cpu_limit ?? spec?.cpu ?? preset?.cpu ?? null,
    processes: preset?.processes ?? null,
    // The database's storage is the deployment's /data on local compute.
    dataDiskMb: storageGi != null ? storageGi * 1024 : (preset?.dataDiskMb ?? null),
    tmpDiskMb: preset?.tmpDiskMb ?? null,
  };
}

/** resource_spec.volumes and volume_mounts, for container compute to check and map. */
export function volumesOf(revision: AssignedRevision): { volumes: unknown; mounts: unknown } {
  const spec = revision.source_config.resource_spec as { volumes?: unknown; volume_mounts?: unknown } | null | undefined;
  return { volumes: spec?.volumes, mounts: spec?.volume_mounts };
}

/** resource_spec.init_containers and sidecars, for container compute to check and run. */
export function companionContainersOf(revision: AssignedRevision): { initContainers: unknown; sidecars: unknown } {
  const spec = revision.source_config.resource_spec as { init_containers?: unknown; sidecars?: unknown } | null | undefined;
  return { initContainers: spec?.init_containers, sidecars: spec?.sidecars };
}

/** How many containers serve the revision: resource_spec.min_scale (at least one). */
export function replicasOf(revision: AssignedRevision): number {
  const spec = revision.source_config.resource_spec as { min_scale?: number | null } | null | undefined;
  return Math.max(1, Math.floor(spec?.min_scale ?? 1));
}

/** How far the autoscaler may grow the revision: resource_spec.max_scale (never below min_scale). */
export function maxReplicasOf(revision: AssignedRevision): number {
  const spec = revision.source_config.resource_spec as { max_scale?: number | null } | null | undefined;
  return Math.max(replicasOf(revision), Math.floor(spec?.max_scale ?? 1));
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
  if (maxReplicasOf(revision) <= 1) return undefined;
  const spec = (revision.source_config.resource_spec ?? {}) as Record<string, number | null | undefined>;
  const value = (name: string) => spec[name] ?? null;
  const workers = Math.max(1, Math.floor(value("queue_min_scale") ?? 1));
  return {
    workers,
    maxWorkers: Math.max(workers, Math.floor(value("queue_max_scale") ?? workers)),
    workerResources: { memoryLimitMb: value("queue_memory_limit_mb"), cpu: value("queue_cpu_limit") ?? value("queue_cpu") },
    db: {
      cpu: value("db_cpu_limit") ?? value("db_cpu"),
      memoryLimitMb: value("db_memory_limit_mb"),
      maxConnections: value("db_max_connections"),
    },
    cache: { cpu: value("cache_cpu_limit") ?? value("cache_cpu"), memoryLimitMb: value("cache_memory_limit_mb") },
  };
}

/** An external image's custom_url: where its users reach it (their own ingress). */
export function customUrlOf(revision: AssignedRevision): string | undefined {
  const url = revision.source_config.custom_url;
  return typeof url === "string" && url !== "" ? url : undefined;
}

/** resource_spec.labels and annotations, as container labels (annotations prefixed, so the two cannot collide). */
export function labelsOf(revision: AssignedRevision): Record<string, string> {
  const spec = revision.source_config.resource_spec as
    | { labels?: Record<string, string> | null; annotations?: Record<string, string> | null }
    | null
    | undefined;
  const annotations = Object.entries(spec?.annotations ?? {}).map(([name, value]) => [`annotation.${name}`, value]);
  return { ...spec?.labels, ...Object.fromEntries(annotations) };
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
