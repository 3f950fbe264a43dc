import { maskSecrets, type Secret } from "../domain/secrets.js";
import type { SecretBox } from "../domain/secret-box.js";
import type { DeploymentRecord, RevisionRecord } from "../storage/types.js";

/** The API's view of stored records: secrets masked, internal columns left out. */
export function presentDeployment(deployment: DeploymentRecord, latest: RevisionRecord, box: SecretBox) {
  return {
    id: deployment.id,
    tenant_id: deployment.tenant_id,
    name: deployment.name,
    source: deployment.source,
    source_config: deployment.source_config,
    source_revision_config: latest.source_revision_config,
    secrets: maskSecrets(revisionSecrets(latest, box)),
    secret_references: deployment.secret_references,
    created_at: deployment.created_at,
    updated_at: deployment.updated_at,
    status: deployment.status,
    latest_revision_id: deployment.latest_revision_id,
    active_revision_id: deployment.active_revision_id,
    image_version: deployment.image_version,
  };
}

export function presentRevision(revision: RevisionRecord) {
  return {
    id: revision.id,
    deployment_id: revision.deployment_id,
    status: revision.status,
    status_message: revision.status_message,
    source: revision.source,
    source_revision_config: revision.source_revision_config,
    created_at: revision.created_at,
    updated_at: revision.updated_at,
  };
}

export function revisionSecrets(revision: RevisionRecord, box: SecretBox): Secret[] {
  return JSON.parse(box.decrypt(revision.secrets_ciphertext)) as Secret[];
}
