import type { DeploymentSource, DeploymentType } from "./statuses.js";

/** How a listener fetches a repository (domain/git-integrations.ts stores them encrypted). */
export type GitCredentials =
  /** HTTPS: sent as an `Authorization: Basic` header, by git config in git's environment (never argv, never a URL). */
  | { kind: "token"; token: string; username?: string }
  /** SSH: written to 0600 files in a private temporary directory for the duration of one call. */
  | { kind: "ssh"; privateKey: string; knownHosts: string };

/** Where a repo_host revision's source is: the repository, the ref to fetch, and the integration's credentials in clear. */
export interface RevisionRepository {
  url: string;
  ref: string;
  credentials: GitCredentials | null;
  /** A local integration's repositories are paths on the listener's machine. */
  allow_local: boolean;
}

/** An environment variable read from a secret the listener's operator keeps (external images; a cluster's own secrets). */
export interface SecretReference {
  name: string;
  secret_name: string;
  secret_key: string;
}

/**
 * The spec's ResourceSpec, as stored: every field present, null when not set
 * (the control plane fills the defaults of the spec's table). CPU in cores,
 * memory in MB. The object lists are in Kubernetes' shapes, as the user gave
 * them: the compute that maps them checks them.
 *
 * A type rather than an interface, so that it is also a `Record<string, unknown>`.
 */
export type ResourceSpec = {
  min_scale: number | null;
  max_scale: number | null;
  cpu: number | null;
  cpu_limit: number | null;
  memory_mb: number | null;
  memory_limit_mb: number | null;
  queue_min_scale: number | null;
  queue_max_scale: number | null;
  queue_cpu: number | null;
  queue_cpu_limit: number | null;
  queue_memory_mb: number | null;
  queue_memory_limit_mb: number | null;
  cache_cpu: number | null;
  cache_cpu_limit: number | null;
  cache_memory_mb: number | null;
  cache_memory_limit_mb: number | null;
  labels: Record<string, string> | null;
  annotations: Record<string, string> | null;
  service_account_name: string | null;
  image_pull_secrets: Record<string, unknown>[] | null;
  volumes: Record<string, unknown>[] | null;
  volume_mounts: Record<string, unknown>[] | null;
  init_containers: Record<string, unknown>[] | null;
  sidecars: Record<string, unknown>[] | null;
  db_cpu: number | null;
  db_cpu_limit: number | null;
  db_memory_mb: number | null;
  db_memory_limit_mb: number | null;
  db_storage_gi: number | null;
  db_max_connections: number | null;
};

/** A ResourceSpec that sets nothing. Its keys are in the order of the spec's table (API responses list them so). */
export const EMPTY_RESOURCE_SPEC: Readonly<ResourceSpec> = Object.freeze({
  min_scale: null,
  max_scale: null,
  cpu: null,
  cpu_limit: null,
  memory_mb: null,
  memory_limit_mb: null,
  queue_min_scale: null,
  queue_max_scale: null,
  queue_cpu: null,
  queue_cpu_limit: null,
  queue_memory_mb: null,
  queue_memory_limit_mb: null,
  cache_cpu: null,
  cache_cpu_limit: null,
  cache_memory_mb: null,
  cache_memory_limit_mb: null,
  labels: null,
  annotations: null,
  service_account_name: null,
  image_pull_secrets: null,
  volumes: null,
  volume_mounts: null,
  init_containers: null,
  sidecars: null,
  db_cpu: null,
  db_cpu_limit: null,
  db_memory_mb: null,
  db_memory_limit_mb: null,
  db_storage_gi: null,
  db_max_connections: null,
});

export type ResourceSpecField = keyof ResourceSpec;

/** Every field of the spec's ResourceSpec table (reserved ones excepted), in its order. */
export const RESOURCE_SPEC_FIELDS: readonly ResourceSpecField[] = Object.freeze(
  // Object.keys types its result string[]; the literal above has exactly ResourceSpec's keys.
  Object.keys(EMPTY_RESOURCE_SPEC) as ResourceSpecField[],
);

/**
 * How many servers run the revision on local and container compute, from
 * resource_spec: whole numbers, each maximum at least its minimum. A cluster
 * sizes its autoscalers from `resources` itself (KEDA may take workers to none).
 */
export interface RevisionScale {
  /** API servers: min_scale, at least 1. */
  replicas: number;
  /** How far the autoscaler may grow them: max_scale. Above 1, the revision runs in scale-out mode. */
  max_replicas: number;
  /** Scale-out workers: queue_min_scale, at least 1. */
  workers: number;
  /** How far the autoscaler may grow them: queue_max_scale. */
  max_workers: number;
}

/** How a built source (repo_host, internal_source) is built; all null for an image. */
export interface RevisionBuild {
  /** langgraph.json's path in the source, as given (null: not given). */
  graph_config_path: string | null;
  install_command: string | null;
  build_command: string | null;
}

/**
 * What a revision deploys, typed and normalized by the control plane once
 * from its stored snapshot (source_config, source_revision_config, secret
 * references): all a listener reads to build and run it.
 */
export interface RevisionSpec {
  source: DeploymentSource;
  /** dev_free and dev size a revision whose resources set no limits; null: prod's sizing. */
  deployment_type: DeploymentType | null;
  build: RevisionBuild;
  /** The image an external_image or internal_image revision runs (null for a built source, or an image not given yet). */
  image_uri: string | null;
  /** A repo_host revision's repository (null for other sources, and when its integration is gone). */
  repository: RevisionRepository | null;
  /** The commit a repo_host revision was fetched at (null until fetched). */
  repo_commit_sha: string | null;
  /** A repo_host deployment follows its branch: the listener watches the head and asks for a revision of each new one. */
  build_on_push: boolean;
  resources: ResourceSpec;
  scale: RevisionScale;
  /** Where the users of an external image reach it (their own ingress); null: through the router. */
  custom_url: string | null;
  secret_references: SecretReference[];
  /** listener_config.cluster_namespace: the namespace a cluster listener deploys to (null: the listener's own). */
  cluster_namespace: string | null;
}
