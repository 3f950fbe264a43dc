import type { Condition } from "@berth/listener-protocol";
import { complete, SOURCE_CONFIG_FIELDS, SOURCE_REVISION_CONFIG_FIELDS } from "../domain/deployment-rules.js";
import { RESOURCE_SPEC_FIELDS } from "../domain/resource-spec.js";
import { maskSecrets, type Secret } from "../domain/secrets.js";
import type { SecretBox } from "../domain/secret-box.js";
import type { DeploymentRecord, RevisionRecord } from "../storage/types.js";

/** The API's view of stored records: secrets masked, internal columns left out. */
export function presentDeployment(deployment: DeploymentRecord, latest: RevisionRecord, box: SecretBox, conditions: Condition[]) {
  return {
    id: deployment.id,
    tenant_id: deployment.tenant_id,
    name: deployment.name,
    source: deployment.source,
    source_config: orderedSourceConfig(deployment.source_config),
    source_revision_config: complete(SOURCE_REVISION_CONFIG_FIELDS, latest.source_revision_config),
    secrets: maskSecrets(revisionSecrets(latest, box)),
    secret_references: deployment.secret_references,
    created_at: deployment.created_at,
    updated_at: deployment.updated_at,
    status: deployment.status,
    latest_revision_id: deployment.latest_revision_id,
    active_revision_id: deployment.active_revision_id,
    image_version: deployment.image_version,
    conditions,
  };
}

export function presentRevision(revision: RevisionRecord, conditions: Condition[]) {
  return {
    id: revision.id,
    deployment_id: revision.deployment_id,
    status: revision.status,
    status_message: revision.status_message,
    source: revision.source,
    source_revision_config: complete(SOURCE_REVISION_CONFIG_FIELDS, revision.source_revision_config),
    image_digest: revision.image_digest,
    created_at: revision.created_at,
    updated_at: revision.updated_at,
    conditions,
  };
}

export function revisionSecrets(revision: RevisionRecord, box: SecretBox): Secret[] {
  return JSON.parse(box.decrypt(revision.secrets_ciphertext)) as Secret[];
}

/** Fields in the documented order, whatever order the database kept (PostgreSQL's jsonb sorts keys). */
function orderedSourceConfig(sourceConfig: Record<string, unknown>) {
  const ordered = complete(SOURCE_CONFIG_FIELDS, sourceConfig);
  const spec = ordered.resource_spec as Record<string, unknown> | null;
  if (spec) ordered.resource_spec = complete(RESOURCE_SPEC_FIELDS, spec);
  return ordered;
}
