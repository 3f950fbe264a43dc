// The control plane's answers: the types of its own schemas (type-only imports: nothing of the server reaches the bundle).
import { FINAL_REVISION_STATUSES, type RevisionStatus } from "@berth/listener-protocol";
import type { Condition, Revision } from "@berth/control-plane/wire";

export type {
  Deployment,
  DeploymentMetrics,
  Feedback,
  Integration,
  LogLine,
  Page,
  Repository,
  Revision,
  RevisionEvent,
  MetricsWindow,
  Secret,
  ServerInfo,
  Span,
  SpanPage,
  TracedRun,
  UploadUrl,
} from "@berth/control-plane/wire";

/** A revision in a final status never changes again. */
export const isFinal = (status: RevisionStatus) => FINAL_REVISION_STATUSES.includes(status);

/**
 * A revision that never had source: made waiting for it (a new deployment's
 * first revision, before its upload) and skipped when the revision that
 * brought it came. Nothing was built or served from it.
 */
export function neverHadSource(revision: Revision): boolean {
  const config = revision.source_revision_config;
  const missing = revision.source === "internal_image" ? config.image_uri : config.source_tarball_path;
  const waits = revision.source === "internal_source" || revision.source === "internal_image";
  return waits && revision.status === "SKIPPED" && (missing === null || missing === undefined);
}

/** Whether the revision's (or deployment's) condition of this type holds (Serving, Replaced, …). */
export function holds(resource: { conditions: Condition[] }, type: string): boolean {
  return resource.conditions.some((condition) => condition.type === type && condition.status === "True");
}
