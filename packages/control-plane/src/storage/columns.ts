import type { Condition, ObservedDeployment } from "@berth/listener-protocol";

/**
 * The columns both backends select for each record of ./types.ts, in the record's key order, so that either backend
 * returns a record with the same keys in the same order (a stored name that is not the record's key is aliased).
 * PostgreSQL's rows are records as they come: pg parses JSONB, boolean and integer columns, and the pool (service-kit)
 * reads timestamptz as ISO strings and bigint as numbers. SQLite's rows go through sqlite/rows.ts (JSON as text,
 * booleans as 0/1). The tracing tables' columns are in tracing-columns.ts.
 */

export const TENANT = "id, name, created_at";
export const API_KEY = "id, name, prefix, key_hash, all_tenants, tenant_ids, created_at, revoked_at";
export const LISTENER = `id, tenant_id, compute_type, compute_id, compute_config, version, is_default AS "default", created_at,
  updated_at`;
/** The integration columns an update may set (the names of IntegrationChange). */
export const INTEGRATION_CHANGEABLE = [
  "name",
  "repos",
  "base_url",
  "credentials_ciphertext",
  "webhook_secret_ciphertext",
] as const;
export const INTEGRATION = `id, tenant_id, name, provider, installation_id, repos, created_at, kind, base_url, credentials_ciphertext,
  webhook_secret_ciphertext`;
export const DEPLOYMENT = `id, tenant_id, name, source, source_config, secret_references, status, latest_revision_id,
  active_revision_id, image_version, listener_id, created_at, updated_at, deleted_at`;
export const REVISION = `id, deployment_id, tenant_id, number, status, status_message, source, source_revision_config,
  source_config, secret_references, secrets_ciphertext, artifact_revision_id, image_digest, created_at, updated_at`;
export const UPLOAD = "object_path, upload_id, deployment_id, tenant_id, created_at, expires_at, uploaded_at, size_bytes, sha256";
export const TRACING_PROJECT = "id, tenant_id, name, deployment_id, created_at";
export const REVISION_EVENT = "id, revision_id, deployment_id, at, status, message, type, reason";
/** The id first, as the table has it. */
export const LOG = "id, deployment_id, revision_id, kind, timestamp, level, message";

/** Conditions with their keys in the documented order, as both backends return them (jsonb sorts keys). */
export function orderedConditions(conditions: readonly Condition[]): Condition[] {
  return conditions.map(({ type, status, reason, message, last_transition_time, observed_generation }) => ({
    type,
    status,
    reason,
    message,
    last_transition_time,
    observed_generation,
  }));
}

/** An observation with its keys in the documented order. */
export function orderedObserved(observed: ObservedDeployment | null): ObservedDeployment | null {
  if (!observed) return null;
  const { serving_revision_id, healthy, reason, message, sleeping } = observed;
  return { serving_revision_id, healthy, reason, message, ...(sleeping === undefined ? {} : { sleeping }) };
}

/** `columns` qualified by a table alias, for joins. */
export function qualified(columns: string, alias: string): string {
  return columns
    .split(",")
    .map((column) => `${alias}.${column.trim()}`)
    .join(", ");
}
