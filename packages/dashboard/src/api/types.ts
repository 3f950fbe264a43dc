/** The control plane's answers, as far as the dashboard reads them (docs/control-plane.md). */

export interface Secret {
  name: string;
  value: string;
}

export interface Deployment {
  id: string;
  name: string;
  source: string;
  source_config: { custom_url: string | null; repo_url: string | null; integration_id: string | null };
  source_revision_config: { repo_ref: string | null; graph_config_path: string | null };
  secrets: Secret[];
  created_at: string;
  updated_at: string;
  status: string;
  latest_revision_id: string | null;
  active_revision_id: string | null;
}

export interface Revision {
  id: string;
  deployment_id: string;
  status: string;
  status_message: string;
  source?: string;
  source_revision_config?: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface Page<T> {
  resources: T[];
  offset: number;
}

export interface LogLine {
  id: string;
  timestamp: string;
  level: string;
  message: string;
}

export interface Repository {
  name: string;
  owner: string;
  url: string;
  default_branch: string;
}

export interface Integration {
  id: string;
  name: string;
  /** github, gitlab, gitea, git or local. */
  kind: string;
}

export interface UploadUrl {
  upload_url: string;
  object_path: string;
}

/** A revision in one of these statuses never changes again. */
export const FINAL_STATUSES = ["DEPLOYED", "CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED", "SKIPPED", "INTERRUPTED"];

export const isFinal = (status: string) => FINAL_STATUSES.includes(status);

/**
 * A revision that never had source: made waiting for it (a new deployment's
 * first revision, before its upload) and skipped when the revision that
 * brought it came. Nothing was built or served from it.
 */
export function neverHadSource(revision: Revision): boolean {
  const config = revision.source_revision_config ?? {};
  const missing = revision.source === "internal_image" ? config.image_uri : config.source_tarball_path;
  const waits = revision.source === "internal_source" || revision.source === "internal_image";
  return waits && revision.status === "SKIPPED" && (missing === null || missing === undefined);
}
