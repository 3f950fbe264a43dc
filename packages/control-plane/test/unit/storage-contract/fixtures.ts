// Records the storage contract tests build their calls from, with times from
// a fixed clock (no test depends on the machine's).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ConflictError } from "@berth/service-kit";
import type {
  AgentConnectionRecord,
  AuthFlowRecord,
  OAuthProviderRecord,
  OAuthTokenRecord,
} from "../../../src/storage/auth-types.js";
import type { TracedRunRecord } from "../../../src/storage/tracing-types.js";
import type {
  ApiKeyRecord,
  ControlPlaneStorage,
  DeploymentChange,
  DeploymentRecord,
  ListenerRecord,
  NewRevision,
  RevisionRecord,
  TracingProjectRecord,
} from "../../../src/storage/types.js";

export const BASE = Date.parse("2025-01-01T00:00:00.000Z");
let clock = 0;
/** A new timestamp, later than every earlier one (ISO with milliseconds, as the application writes them). */
export const tick = () => new Date(BASE + ++clock * 1000).toISOString();

const RESOURCE_SPEC = {
  min_scale: 1,
  max_scale: 1,
  cpu_request: "1",
  memory_request: "1Gi",
  cpu_limit: null,
  memory_limit: null,
};

export interface NewDeployment {
  deployment: DeploymentRecord;
  revision: NewRevision;
  project: TracingProjectRecord;
  /** What get() returns after create. */
  stored: DeploymentRecord;
}

export interface DeploymentOptions {
  id?: string;
  revisionId?: string;
  at?: string;
  deployment?: Partial<DeploymentRecord>;
  sourceConfig?: Record<string, unknown>;
}

export function newDeployment(tenantId: string, name: string, options: DeploymentOptions = {}): NewDeployment {
  const at = options.at ?? tick();
  const id = options.id ?? randomUUID();
  const source_config = {
    deployment_type: "dev",
    image_uri: "registry.example/agent:1",
    listener_id: null,
    listener_config: null,
    custom_url: null,
    resource_spec: RESOURCE_SPEC,
    ...options.sourceConfig,
  };
  const deployment: DeploymentRecord = {
    id,
    tenant_id: tenantId,
    name,
    source: "external_image",
    source_config,
    secret_references: null,
    status: "AWAITING_DATABASE",
    latest_revision_id: null,
    active_revision_id: null,
    image_version: null,
    // As the service decides it (without a default listener).
    listener_id: source_config.listener_id as string | null,
    created_at: at,
    updated_at: at,
    deleted_at: null,
    ...options.deployment,
  };
  const revision: NewRevision = {
    id: options.revisionId ?? randomUUID(),
    status: "QUEUED",
    status_message: "",
    source: deployment.source,
    source_revision_config: { image_uri: "registry.example/agent:1", repo_ref: null },
    source_config: deployment.source_config,
    secret_references: deployment.secret_references,
    secrets_ciphertext: "v1:ciphertext",
    artifact_revision_id: null,
    created_at: at,
    updated_at: at,
  };
  const project: TracingProjectRecord = { id: `tp-${id}`, tenant_id: tenantId, name, deployment_id: id, created_at: at };
  return { deployment, revision, project, stored: { ...deployment, latest_revision_id: revision.id, deleted_at: null } };
}

/** A revision for update()'s plan, derived from the latest one. */
export function nextRevision(latest: RevisionRecord, id: string = randomUUID(), at = tick()): NewRevision {
  const { number: _n, deployment_id: _d, tenant_id: _t, ...rest } = latest;
  return { ...rest, id, status: "QUEUED", status_message: "", created_at: at, updated_at: at };
}

/** A PATCH that changes nothing but makes a new revision of the deployment (the latest one is superseded or replaced). */
export function sameWithNewRevision(deployment: DeploymentRecord, latest: RevisionRecord): DeploymentChange {
  return {
    source_config: deployment.source_config,
    secret_references: deployment.secret_references,
    updated_at: tick(),
    revision: nextRevision(latest),
  };
}

export function newListener(tenantId: string, computeId: string, id: string = randomUUID(), isDefault = false): ListenerRecord {
  const at = tick();
  return {
    id,
    tenant_id: tenantId,
    compute_type: "cluster",
    compute_id: computeId,
    compute_config: { cluster_namespaces: ["ns-a", "ns-b"] },
    version: null,
    default: isDefault,
    created_at: at,
    updated_at: at,
  };
}

export function newApiKey(hash: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: randomUUID(),
    name: "key",
    prefix: "berth_abcdef",
    key_hash: hash,
    all_tenants: false,
    tenant_ids: [],
    created_at: tick(),
    revoked_at: null,
    ...overrides,
  };
}

/** A traced run as the tracing service stores it; only the ids are required. */
export function newTracedRun(
  tenantId: string,
  projectId: string,
  overrides: Partial<TracedRunRecord> & Pick<TracedRunRecord, "id">,
): TracedRunRecord {
  const at = tick();
  return {
    tenant_id: tenantId,
    project_id: projectId,
    trace_id: overrides.id,
    parent_run_id: null,
    dotted_order: null,
    name: "run",
    run_type: "chain",
    start_time: at,
    end_time: null,
    inputs: null,
    outputs: null,
    error: null,
    extra: null,
    tags: null,
    events: null,
    reference_example_id: null,
    prompt_tokens: null,
    completion_tokens: null,
    total_tokens: null,
    thread_id: null,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

/** An OAuth provider of the Auth Service, every field set. */
export function newProvider(
  tenantId: string,
  providerId: string,
  overrides: Partial<OAuthProviderRecord> = {},
): OAuthProviderRecord {
  const at = tick();
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    provider_id: providerId,
    name: `Provider ${providerId}`,
    client_id: "client-id",
    client_secret_ciphertext: "v1:client-secret",
    auth_url: "https://idp.example/authorize",
    token_url: "https://idp.example/token",
    revocation_url: "https://idp.example/revoke",
    uses_pkce: true,
    code_challenge_method: "S256",
    provider_type: "slack",
    mcp_server_url: null,
    token_endpoint_auth_method: "client_secret_basic",
    is_dynamic_client: false,
    created_at: at,
    updated_at: at,
    shared_across_deployments: false,
    ...overrides,
  };
}

/** A user's token for a provider (by its provider_id). */
export function newToken(
  tenantId: string,
  providerId: string,
  userId: string,
  overrides: Partial<OAuthTokenRecord> = {},
): OAuthTokenRecord {
  const at = tick();
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    provider_id: providerId,
    user_id: userId,
    provider_account_label: "someone@example.com",
    scopes: ["openid", "chat:write"],
    access_token_ciphertext: "v1:access",
    refresh_token_ciphertext: "v1:refresh",
    token_type: "Bearer",
    expires_at: "2025-02-01T00:00:00.000Z",
    is_default: false,
    created_at: at,
    updated_at: at,
    deployment_id: "deployment-1",
    ...overrides,
  };
}

/** A pending consent flow, expiring an hour after it starts. */
export function newFlow(
  tenantId: string,
  providerId: string,
  userId: string,
  overrides: Partial<AuthFlowRecord> = {},
): AuthFlowRecord {
  const at = tick();
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    provider_id: providerId,
    user_id: userId,
    agent_id: null,
    scopes: ["openid"],
    state_hash: randomUUID().replaceAll("-", ""),
    code_verifier_ciphertext: "v1:verifier",
    redirect_uri: "https://cp.example/v2/auth/callback",
    is_default: true,
    status: "pending",
    token_id: null,
    error: null,
    expires_at: new Date(Date.parse(at) + 3_600_000).toISOString(),
    created_at: at,
    finished_at: null,
    deployment_id: "deployment-1",
    ...overrides,
  };
}

export function newConnection(tenantId: string, agentId: string, tokenId: string, createdBy = "user-1"): AgentConnectionRecord {
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    agent_id: agentId,
    oauth_token_id: tokenId,
    created_by: createdBy,
    created_at: tick(),
    deployment_id: null,
  };
}

/** An assert.rejects check: a ConflictError with this message. */
export const isConflict = (message: string) => (err: unknown) => {
  assert.ok(err instanceof ConflictError, `expected a ConflictError, got ${String(err)}`);
  assert.equal(err.message, message);
  return true;
};

/** A new workspace, so tests share no listings. */
export async function newTenant(storage: ControlPlaneStorage): Promise<string> {
  const id = `tenant-${randomUUID()}`;
  await storage.tenants.create({ id, name: id, created_at: tick() });
  return id;
}

/** A deployment created through `storage`. */
export async function created(
  storage: ControlPlaneStorage,
  tenantId: string,
  name: string,
  options: DeploymentOptions = {},
): Promise<NewDeployment> {
  const made = newDeployment(tenantId, name, options);
  await storage.deployments.create(made.deployment, made.revision, made.project);
  return made;
}
