import type { ApiKeyRecord, DeploymentRecord, IntegrationRecord, ListenerRecord, RevisionRecord } from "../types.js";

/** Turns stored rows (JSON as text, booleans as 0/1) back into records. */
type Row = Record<string, unknown>;

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.parse(value as string));

export function deploymentFromRow(row: Row): DeploymentRecord {
  return { ...row, source_config: json(row.source_config), secret_references: json(row.secret_references) } as DeploymentRecord;
}

export function revisionFromRow(row: Row): RevisionRecord {
  return {
    ...row,
    source_revision_config: json(row.source_revision_config),
    source_config: json(row.source_config),
    secret_references: json(row.secret_references),
  } as RevisionRecord;
}

export function listenerFromRow(row: Row): ListenerRecord {
  return { ...row, compute_config: json(row.compute_config), default: row.default === 1 } as ListenerRecord;
}

export function integrationFromRow(row: Row): IntegrationRecord {
  return { ...row, repos: json(row.repos) } as IntegrationRecord;
}

export function apiKeyFromRow(row: Row): ApiKeyRecord {
  return { ...row, all_tenants: row.all_tenants === 1, tenant_ids: json(row.tenant_ids) } as ApiKeyRecord;
}

export const toJson = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
