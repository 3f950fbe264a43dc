import {
  DEPLOYMENT_TYPES,
  type DeploymentType,
  type ResourceSpec,
  type RevisionRepository,
  type RevisionScale,
  type RevisionSpec,
} from "@berth/listener-protocol";
import type { RevisionRecord } from "../storage/types.js";
import { resourceSpecOf } from "./resource-spec.js";

/** What of a stored revision its spec is made of (a revision is a full snapshot: its deployment is not needed). */
export type RevisionSnapshot = Pick<RevisionRecord, "source" | "source_config" | "source_revision_config" | "secret_references">;

const textOrNull = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);
const isDeploymentType = (value: unknown): value is DeploymentType => DEPLOYMENT_TYPES.some((type) => type === value);

/**
 * The typed spec a listener builds and runs a revision from, made once per
 * assignment from the revision's stored snapshot. `repository` is the
 * repo_host revision's repository with its integration's credentials (the
 * caller reads the integration; null when it is gone).
 */
export function revisionSpecOf(revision: RevisionSnapshot, repository: RevisionRepository | null): RevisionSpec {
  const config = revision.source_config;
  const revisionConfig = revision.source_revision_config;
  const resources = resourceSpecOf(config.resource_spec);
  const listenerConfig = config.listener_config;
  return {
    source: revision.source,
    deployment_type: isDeploymentType(config.deployment_type) ? config.deployment_type : null,
    build: {
      graph_config_path: textOrNull(revisionConfig.graph_config_path),
      install_command: textOrNull(config.install_command),
      build_command: textOrNull(config.build_command),
    },
    image_uri: textOrNull(revisionConfig.image_uri),
    repository,
    repo_commit_sha: textOrNull(revisionConfig.repo_commit_sha),
    build_on_push: config.build_on_push === true,
    resources,
    scale: scaleOf(resources),
    custom_url: textOrNull(config.custom_url),
    secret_references: revision.secret_references ?? [],
    cluster_namespace:
      typeof listenerConfig === "object" && listenerConfig !== null && "cluster_namespace" in listenerConfig
        ? textOrNull(listenerConfig.cluster_namespace)
        : null,
  };
}

/** Replica counts as local and container compute run them: at least one of each, no maximum below its minimum. */
function scaleOf(resources: ResourceSpec): RevisionScale {
  const replicas = Math.max(1, Math.floor(resources.min_scale ?? 1));
  const workers = Math.max(1, Math.floor(resources.queue_min_scale ?? 1));
  return {
    replicas,
    max_replicas: Math.max(replicas, Math.floor(resources.max_scale ?? 1)),
    workers,
    max_workers: Math.max(workers, Math.floor(resources.queue_max_scale ?? workers)),
  };
}
