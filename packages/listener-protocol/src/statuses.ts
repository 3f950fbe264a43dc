/** The enums of the spec, and which revision statuses are final. */
export const DEPLOYMENT_SOURCES = ["repo_host", "external_image", "internal_image", "internal_source"] as const;
export type DeploymentSource = (typeof DEPLOYMENT_SOURCES)[number];

export const DEPLOYMENT_STATUSES = ["AWAITING_DATABASE", "READY", "UNUSED", "AWAITING_DELETE", "UNKNOWN"] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

export const REVISION_STATUSES = [
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
  "DEPLOYING",
  "DEPLOYED",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "SKIPPED",
  "INTERRUPTED",
  "UNKNOWN",
] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];

/** A final revision never changes status again (DEPLOYED stays DEPLOYED when a later revision replaces it). */
export const FINAL_REVISION_STATUSES: readonly RevisionStatus[] = [
  "DEPLOYED",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "SKIPPED",
  "INTERRUPTED",
];

export const IN_PROGRESS_REVISION_STATUSES: readonly RevisionStatus[] = REVISION_STATUSES.filter(
  (status) => !FINAL_REVISION_STATUSES.includes(status),
);

/**
 * Why revisions still in progress end SKIPPED when a newer one (numbered
 * `number`) arrives: `waiting` for one that was waiting for its source
 * (CREATING: it never had any, e.g. a new deployment's first revision before
 * its upload, which a PATCH brings as a new revision), `other` for the rest.
 */
export function supersededMessages(
  newer: { id: string; source: string; source_revision_config: Record<string, unknown> },
  number: number,
): { waiting: string; other: string } {
  const other = `Superseded by revision ${number} (${newer.id})`;
  const config = newer.source_revision_config;
  const has = (field: string) => typeof config[field] === "string" && config[field] !== "";
  if (newer.source === "internal_source" && has("source_tarball_path"))
    return { waiting: `No source: waited for an upload, which came with revision ${number} (${newer.id})`, other };
  if (newer.source === "internal_image" && has("image_uri"))
    return { waiting: `No image: waited for one, which came with revision ${number} (${newer.id})`, other };
  return { waiting: other, other };
}

export const DEPLOYMENT_TYPES = ["dev_free", "dev", "prod"] as const;
export type DeploymentType = (typeof DEPLOYMENT_TYPES)[number];

export const COMPUTE_TYPES = ["local", "docker", "cluster"] as const;
