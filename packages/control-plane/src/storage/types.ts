/**
 * The control plane's storage interface: one SQLite and one PostgreSQL
 * implementation, the same black-box tests and storage contract suite
 * (test/unit/storage-contract.test.ts) over both. Records are plain JSON
 * values; every multi-row change is one transaction.
 */
import type {
  Condition,
  DeploymentReport,
  LogEntry,
  LogKind,
  ObservedDeployment,
  RevisionEventInput,
  RevisionFacts,
} from "@berth/listener-protocol";
import type { DeploymentSource, DeploymentStatus, RevisionStatus } from "@berth/listener-protocol";
import type { MetricSample } from "@berth/listener-protocol";
import type { AuthStore } from "./auth-types.js";
import type { TracingProjectRecord, TracingStore } from "./tracing-types.js";

export type { DeploymentReport, LogEntry, LogKind, TracingProjectRecord };

export type JsonObject = Record<string, unknown>;

export interface SecretReferenceRecord {
  name: string;
  secret_name: string;
  secret_key: string;
}

export interface TenantRecord {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** The first characters of the key, to tell keys apart in listings. */
  prefix: string;
  /** SHA-256 (hex) of the whole key; the key itself is never stored. */
  key_hash: string;
  /** Valid for every workspace (admin keys). */
  all_tenants: boolean;
  tenant_ids: string[];
  created_at: string;
  revoked_at: string | null;
}

export interface ListenerRecord {
  id: string;
  tenant_id: string;
  compute_type: string;
  compute_id: string;
  compute_config: { cluster_namespaces: string[] | null };
  version: string | null;
  /** Deployments of the workspace that name no listener (every source but external_image) go to this one. */
  default: boolean;
  created_at: string;
  updated_at: string;
}

export interface RepositoryRecord {
  id: number;
  name: string;
  owner: string;
  url: string;
  default_branch: string;
}

/** What kind of git host an integration reaches (docs/git-deployments.md). */
export type IntegrationKind = "git" | "github" | "gitlab" | "gitea" | "local";

export interface IntegrationRecord {
  id: string;
  tenant_id: string;
  name: string;
  provider: "repo_host";
  installation_id: number;
  /** Repositories registered with it (hosts without a listing API list these). */
  repos: RepositoryRecord[];
  created_at: string;
  kind: IntegrationKind;
  /** The host's web or API base (github, gitlab, gitea), or the folder of bare repositories (local). */
  base_url: string | null;
  /** HTTPS token or SSH key, encrypted (domain/secret-box.ts); never returned. */
  credentials_ciphertext: string | null;
  /** The secret push webhooks are signed with, encrypted. */
  webhook_secret_ciphertext: string | null;
}

/** What an integration's owner may change. */
export type IntegrationChange = Partial<
  Pick<IntegrationRecord, "name" | "repos" | "base_url" | "credentials_ciphertext" | "webhook_secret_ciphertext">
>;

export interface DeploymentRecord {
  id: string;
  tenant_id: string;
  name: string;
  source: DeploymentSource;
  /** Every SourceConfig field (nulls included); resource_spec with defaults filled. */
  source_config: JsonObject;
  secret_references: SecretReferenceRecord[] | null;
  status: DeploymentStatus;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  image_version: string | null;
  /** The listener that runs it; null: the control plane's embedded listener. */
  listener_id: string | null;
  created_at: string;
  updated_at: string;
  /** Set by DELETE: the deployment is gone for the API, kept until its compute is torn down. */
  deleted_at: string | null;
}

export interface RevisionRecord {
  id: string;
  deployment_id: string;
  tenant_id: string;
  /** 1, 2, 3… per deployment: the order of creation. */
  number: number;
  status: RevisionStatus;
  status_message: string;
  source: DeploymentSource;
  /** Every SourceRevisionConfig field of this revision (inherited ones included). */
  source_revision_config: JsonObject;
  /** What else the revision deploys: source_config and secret_references as they were when it was made. */
  source_config: JsonObject;
  secret_references: SecretReferenceRecord[] | null;
  /** The revision's secrets, encrypted (see domain/secret-box.ts). */
  secrets_ciphertext: string;
  /** A redeploy: the revision whose built artifact this one deploys again (no build). */
  artifact_revision_id: string | null;
  /** The content id of the image it ran, on a container listener. */
  image_digest: string | null;
  created_at: string;
  updated_at: string;
}

export interface UploadRecord {
  object_path: string;
  upload_id: string;
  deployment_id: string;
  tenant_id: string;
  created_at: string;
  expires_at: string;
  uploaded_at: string | null;
  size_bytes: number | null;
  sha256: string | null;
}

/**
 * One step of a revision's timeline: every status it went through, with the
 * reason, and the events recorded without a move (then `status` is the one it
 * had). `type` and `reason` are null for a move: they follow from its status.
 */
export interface RevisionEventRecord {
  id: number;
  revision_id: string;
  deployment_id: string;
  at: string;
  status: RevisionStatus;
  message: string;
  type: RevisionEventInput["type"] | null;
  reason: string | null;
}

export interface LogRecord extends LogEntry {
  id: number;
}

export interface LogFilter {
  deployment_id: string;
  revision_id?: string;
  kind: LogKind;
  order: "asc" | "desc";
  limit: number;
  offset: number;
  level?: string;
  /** Case-insensitive substring of the message. */
  query?: string;
  start_time?: string;
  end_time?: string;
}

/** What a listener reports about a deployment it runs. */

export interface DeploymentFilter {
  limit: number;
  offset: number;
  name_contains?: string;
  statuses?: string[];
  deployment_ids?: string[];
  deployment_type?: string;
}

export interface RevisionFilter {
  limit: number;
  offset: number;
  statuses?: string[];
}

/**
 * A new revision as the domain computed it; the store numbers it, makes it
 * the latest and starts its timeline.
 */
/** A revision as it is created: the listener records its image digest later. */
export type NewRevision = Omit<RevisionRecord, "number" | "deployment_id" | "tenant_id" | "image_digest">;

/** An event a revision's move records on another revision of its deployment (the one it replaces). */
export interface EventAlongside {
  revisionId: string;
  event: RevisionEventInput;
}

/** What a PATCH changes, decided by `plan` from the current records inside the store's transaction. */
export interface DeploymentChange {
  source_config: JsonObject;
  secret_references: SecretReferenceRecord[] | null;
  updated_at: string;
  revision?: NewRevision;
}

/** Rows per status, for the control plane's own metrics. */
export type StatusCounts = Record<string, number>;

export interface DeploymentStore {
  /**
   * Inserts the deployment, its first revision and (unless one of that name
   * exists in the workspace) its tracing project. ConflictError when a live
   * deployment of the workspace has the name.
   */
  create(deployment: DeploymentRecord, revision: NewRevision, tracingProject: TracingProjectRecord): Promise<void>;
  /** A live (not deleted) deployment of the workspace. */
  get(tenantId: string, id: string): Promise<DeploymentRecord | undefined>;
  list(tenantId: string, filter: DeploymentFilter): Promise<DeploymentRecord[]>;
  /**
   * Runs `plan` on the deployment and its latest revision with the deployment
   * locked, then applies the change: concurrent updates take turns, each
   * seeing the other's result. A new revision becomes the latest, and earlier
   * revisions that were not final end SKIPPED. Undefined when not found.
   */
  update(
    tenantId: string,
    id: string,
    plan: (deployment: DeploymentRecord, latest: RevisionRecord) => DeploymentChange,
  ): Promise<{ deployment: DeploymentRecord; revision?: RevisionRecord } | undefined>;
  /**
   * Marks live deployments deleted (status AWAITING_DELETE), deleting their
   * tracing projects too when asked; returns the ids that were live.
   */
  markDeleted(tenantId: string, ids: string[], deleteTracingProjects: boolean, now: string): Promise<string[]>;
  /** A deployment by id in any workspace, deleted or not (for listeners). */
  getAny(id: string): Promise<DeploymentRecord | undefined>;
  /** The deployments a listener runs, deleted ones not yet purged included; null: the embedded listener's. */
  assigned(listenerId: string | null): Promise<DeploymentRecord[]>;
  /** Applies a listener's report (custom_url goes into source_config). */
  report(id: string, report: DeploymentReport, now: string): Promise<void>;
  /** Removes a deleted deployment for good: its revisions, events, logs and uploads too. */
  purge(id: string): Promise<void>;
  /** How many deployments each status has, across workspaces (deleted ones not yet purged included). */
  countByStatus(): Promise<StatusCounts>;
}

export interface RevisionStore {
  get(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionRecord | undefined>;
  list(tenantId: string, deploymentId: string, filter: RevisionFilter): Promise<RevisionRecord[]>;
  /** The latest revision of a deployment (deleted or not). */
  latest(deploymentId: string): Promise<RevisionRecord | undefined>;
  /** The latest revision of each of these deployments, by deployment id, in one query (a page of a list). */
  latestOfEach(deploymentIds: readonly string[]): Promise<Map<string, RevisionRecord>>;
  /** A revision by id, whatever its deployment (for listeners). */
  getAny(revisionId: string): Promise<RevisionRecord | undefined>;
  /** A deployment's revisions in the given statuses, newest first (for listeners). */
  inStatuses(deploymentId: string, statuses: readonly RevisionStatus[]): Promise<RevisionRecord[]>;
  /** The revision's timeline, oldest first. */
  events(revisionId: string): Promise<RevisionEventRecord[]>;
  /**
   * Moves a revision to `status` if it is currently in one of `from`, and
   * adds the step to its timeline; returns the updated record, or undefined
   * when it was not in `from`. With `alongside`, an event is recorded on
   * another revision in the same transaction when the move happens (its
   * message that revision's status_message), so no reader sees one without
   * the other.
   */
  transition(
    revisionId: string,
    from: RevisionStatus[],
    status: RevisionStatus,
    message: string,
    now: string,
    facts?: RevisionFacts,
    alongside?: EventAlongside,
  ): Promise<RevisionRecord | undefined>;
  /**
   * Adds an event to the revision's timeline without moving its status (with
   * `statusMessage`, that becomes its status_message); false when there is no
   * such revision.
   */
  recordEvent(revisionId: string, event: RevisionEventInput, now: string, statusMessage?: string): Promise<boolean>;
  /** How many revisions each status has, across workspaces (those of deployments not yet purged). */
  countByStatus(): Promise<StatusCounts>;
}

/** What ConditionStore.record writes for one deployment. */
export interface ConditionChange {
  /** The deployment's status, derived from its conditions (a deleted deployment keeps AWAITING_DELETE). */
  status: DeploymentStatus;
  conditions: Condition[];
  /** Replaces the listener's last observation when given (null: none). */
  observed?: ObservedDeployment | null;
  revisions: { id: string; conditions: Condition[] }[];
}

/**
 * The conditions of deployments and revisions as last recorded (the services
 * derive them; the store keeps them for their transition times), and the
 * listener's last observation of each deployment.
 */
export interface ConditionStore {
  /** The recorded conditions of these deployments and revisions, by id; an id with none recorded is absent. */
  conditionsOf(ids: readonly string[]): Promise<Map<string, Condition[]>>;
  /** The listeners' last observations of these deployments, by id; a deployment with none recorded is absent. */
  observedOf(deploymentIds: readonly string[]): Promise<Map<string, ObservedDeployment>>;
  /** Records the deployment's status and conditions and those of some of its revisions, in one transaction. */
  record(deploymentId: string, change: ConditionChange): Promise<void>;
}

export interface TenantStore {
  create(tenant: TenantRecord): Promise<void>;
  get(id: string): Promise<TenantRecord | undefined>;
  list(): Promise<TenantRecord[]>;
}

export interface ApiKeyStore {
  /** Inserts the key; a key whose hash is already stored is left as it is. */
  create(key: ApiKeyRecord): Promise<void>;
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Sets revoked_at (once); undefined when no such key. */
  revoke(id: string, now: string): Promise<ApiKeyRecord | undefined>;
}

export interface ListenerStore {
  /** ConflictError when the workspace has a listener with that compute_id. A new default unmarks the previous one. */
  create(listener: ListenerRecord): Promise<void>;
  get(tenantId: string, id: string): Promise<ListenerRecord | undefined>;
  list(tenantId: string, limit: number, offset: number): Promise<ListenerRecord[]>;
  update(
    tenantId: string,
    id: string,
    change: Pick<ListenerRecord, "compute_config" | "version" | "default" | "updated_at">,
  ): Promise<ListenerRecord | undefined>;
  /** The workspace's default listener, if one is marked. */
  defaultOf(tenantId: string): Promise<ListenerRecord | undefined>;
  /** ConflictError while a live deployment uses it; false when not found. */
  delete(tenantId: string, id: string): Promise<boolean>;
}

export interface IntegrationStore {
  create(integration: IntegrationRecord): Promise<void>;
  get(tenantId: string, id: string): Promise<IntegrationRecord | undefined>;
  /** An integration by id alone (a webhook names its integration, not its workspace). */
  getAny(id: string): Promise<IntegrationRecord | undefined>;
  list(tenantId: string): Promise<IntegrationRecord[]>;
  update(tenantId: string, id: string, change: IntegrationChange): Promise<IntegrationRecord | undefined>;
  delete(tenantId: string, id: string): Promise<boolean>;
  /** Records a webhook delivery id; false when it was recorded before (a replay). */
  recordDelivery(integrationId: string, deliveryId: string, at: string): Promise<boolean>;
}

export interface UploadStore {
  create(upload: UploadRecord): Promise<void>;
  getById(uploadId: string): Promise<UploadRecord | undefined>;
  getByPath(objectPath: string): Promise<UploadRecord | undefined>;
  markUploaded(uploadId: string, sizeBytes: number, sha256: string, now: string): Promise<void>;
  /** Whether a revision deploys the tarball at this path (it then takes no more uploads). */
  isUsed(objectPath: string): Promise<boolean>;
}

export interface LogStore {
  append(entries: LogEntry[]): Promise<void>;
  query(filter: LogFilter): Promise<LogRecord[]>;
}

/** Samples of deployments' agent servers, as listeners send them. */
export interface DeploymentMetricStore {
  append(samples: MetricSample[]): Promise<void>;
  /** The deployment's samples at or after `from` (ISO), oldest first. */
  since(deploymentId: string, from: string): Promise<MetricSample[]>;
  /** Removes every sample before `before` (ISO); resolves with how many. */
  prune(before: string): Promise<number>;
}

export interface TracingProjectStore {
  getByName(tenantId: string, name: string): Promise<TracingProjectRecord | undefined>;
}

export interface ControlPlaneStorage {
  tenants: TenantStore;
  apiKeys: ApiKeyStore;
  deployments: DeploymentStore;
  revisions: RevisionStore;
  conditions: ConditionStore;
  listeners: ListenerStore;
  integrations: IntegrationStore;
  uploads: UploadStore;
  tracingProjects: TracingProjectStore;
  logs: LogStore;
  /** Samples of the deployments' servers' metrics, for their charts. */
  deploymentMetrics: DeploymentMetricStore;
  /** Tracing: traced runs, feedback and feedback tokens; see src/tracing. */
  tracing: TracingStore;
  /** The Auth Service: OAuth providers, consent flows, users' tokens and agent connections; see auth-types.ts. */
  auth: AuthStore;
  close(): Promise<void>;
}
