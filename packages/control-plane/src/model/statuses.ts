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

export const DEPLOYMENT_TYPES = ["dev_free", "dev", "prod"] as const;

export const COMPUTE_TYPES = ["local", "docker", "cluster"] as const;
