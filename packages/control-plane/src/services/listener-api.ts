import type { IntegrationService } from "./integrations.js";
import type { RegistryTokenService } from "./registry-tokens.js";
import { NotFoundError } from "@berth/service-kit";
import { rm } from "node:fs/promises";
import { setImmediate } from "node:timers/promises";
import { join } from "node:path";
import {
  AUTH_SERVICE_KEY_NAME_PREFIX,
  apiKeyRecord,
  hashApiKey,
  isAuthServiceOnly,
  isTracingOnly,
  TRACING_KEY_NAME_PREFIX,
} from "../api-keys/api-keys.js";
import { revisionSpecOf } from "../domain/revision-spec.js";
import { runWebhookSecretOf } from "../domain/run-webhooks.js";
import type { SecretBox } from "../domain/secret-box.js";
import type {
  AssignedRevision,
  Assignment,
  Authorization,
  MetricSample,
  RevisionEventInput,
  RevisionFacts,
} from "@berth/listener-protocol";
import { IN_PROGRESS_REVISION_STATUSES, type RevisionRepository, type RevisionStatus } from "@berth/listener-protocol";
import type {
  ControlPlaneStorage,
  DeploymentRecord,
  DeploymentReport,
  EventAlongside,
  LogEntry,
  RevisionRecord,
} from "../storage/types.js";
import { observationOf } from "../domain/status-conditions.js";
import { revisionSecrets } from "./deployment-views.js";
import type { ChangeFeed } from "./change-feed.js";
import type { DeploymentMetricsService } from "./deployment-metrics.js";
import type { LogService } from "./logs.js";
import { recordConditions } from "./status-conditions.js";

export type { AssignedRevision, Assignment, Authorization };

/** Assignments made at once in a listener's poll. */
const ASSIGNMENTS_AT_ONCE = 50;

/** How long an assigned revision no pass used stays known (the passes of other listeners may still need it). */
const ASSIGNED_KEPT_MS = 60_000;

/** Whose work a listener asks for: the embedded listener runs deployments that have no listener. */
export type ListenerScope = { kind: "embedded" } | { kind: "remote"; listenerId: string; tenantId: string };

/**
 * What listeners call: desired state out, status and logs in. The embedded
 * listener calls it in process; a remote one through the HTTP routes in
 * http/routes/listener-protocol.ts. Every call is confined to the listener's
 * deployments.
 */
export class ListenerApi {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly box: SecretBox,
    private readonly uploadsDir: string,
    private readonly registry: RegistryTokenService,
    private readonly integrations: IntegrationService,
    private readonly changes: ChangeFeed,
    private readonly logs: LogService,
    /** Where the deployments' metric samples go; without it they are dropped. */
    private readonly metrics?: DeploymentMetricsService,
  ) {}

  /** The scope of a `berth listener` process of the caller's workspace; 404 for another workspace's listener. */
  async remoteScope(tenantId: string, listenerId: string): Promise<ListenerScope> {
    if (!(await this.storage.listeners.get(tenantId, listenerId))) throw new NotFoundError(`Listener ${listenerId} not found`);
    return { kind: "remote", listenerId, tenantId };
  }

  async assignments(scope: ListenerScope): Promise<Assignment[]> {
    const deployments = await this.storage.deployments.assigned(scope.kind === "embedded" ? null : scope.listenerId);
    const used = new Set<string>();
    const assignments: Assignment[] = [];
    for (let at = 0; at < deployments.length; at += ASSIGNMENTS_AT_ONCE) {
      // SQLite answers synchronously: between two slices the API's requests get their turn, whatever the number of deployments.
      if (at > 0) await setImmediate();
      const slice = deployments.slice(at, at + ASSIGNMENTS_AT_ONCE);
      assignments.push(...(await Promise.all(slice.map((deployment) => this.assignment(deployment, used)))));
    }
    // What no assignment uses any more (a revision replaced, a deployment moved) is forgotten.
    for (const id of this.assigned.keys()) if (!used.has(id) && !this.inUse(id)) this.assigned.delete(id);
    return assignments;
  }

  /** Whether another listener's pass used the revision recently enough to keep it (passes of several listeners interleave). */
  private inUse(revisionId: string): boolean {
    return Date.now() - (this.assigned.get(revisionId)?.usedAt ?? 0) < ASSIGNED_KEPT_MS;
  }

  /**
   * Compare-and-set of a revision's status; `report` is applied to its
   * deployment when the move happened, and the conditions recomputed, before
   * anyone waiting on the revision hears of it (so DEPLOYED comes with the
   * deployment READY).
   */
  async transition(
    scope: ListenerScope,
    revisionId: string,
    from: RevisionStatus[],
    to: RevisionStatus,
    message: string,
    report?: DeploymentReport,
    facts?: RevisionFacts,
  ) {
    const { revision, deployment } = await this.revisionAndDeployment(scope, revisionId);
    const serving = report?.active_revision_id
      ? (await this.storage.deployments.getAny(revision.deployment_id))?.active_revision_id
      : null;
    const now = new Date().toISOString();
    const replaced = serving && serving !== report?.active_revision_id ? replacedNote(serving, revision, now) : undefined;
    const moved = await this.storage.revisions.transition(revision.id, from, to, message, now, facts, replaced);
    if (moved && report) {
      await this.applyReport(deployment, report, now, [moved.id, serving]);
      this.changes.publish("deployment", { change: "reported", deployment_id: deployment.id });
    } else if (moved) await recordConditions(this.storage, deployment.id, [moved.id], undefined, now);
    if (moved) {
      this.changes.publish("revision", {
        kind: "status",
        deployment: { id: deployment.id, name: deployment.name },
        revision: { id: moved.id, number: moved.number },
        status: to,
        previous: revision.status,
        message,
        url: report?.custom_url ?? null,
      });
    }
    return { transitioned: moved !== undefined, status: (moved ?? (await this.storage.revisions.getAny(revisionId)))?.status };
  }

  /**
   * Applies a listener's report to its deployment and recomputes the
   * conditions of the deployment, of its active revision before and after,
   * and of `revisionIds`; the deployment's status follows from them.
   */
  private async applyReport(
    deployment: DeploymentRecord,
    report: DeploymentReport,
    now: string,
    revisionIds: (string | null | undefined)[],
  ): Promise<void> {
    const observed = observationOf(report, deployment.active_revision_id);
    const { active_revision_id, custom_url, image_version } = report;
    await this.storage.deployments.report(deployment.id, { active_revision_id, custom_url, image_version }, now);
    await recordConditions(this.storage, deployment.id, [deployment.active_revision_id, ...revisionIds], observed, now);
  }

  /** Adds an event to a revision's timeline; its status does not move. */
  async recordEvent(scope: ListenerScope, revisionId: string, event: RevisionEventInput): Promise<void> {
    const { revision, deployment } = await this.revisionAndDeployment(scope, revisionId);
    await this.storage.revisions.recordEvent(revisionId, event, new Date().toISOString());
    // Told as a move to the status it keeps: the terminal's `serving: <reason>` line of a crash or restart.
    this.changes.publish("revision", {
      kind: "status",
      deployment: { id: deployment.id, name: deployment.name },
      revision: { id: revision.id, number: revision.number },
      status: revision.status,
      previous: revision.status,
      message: event.message,
      url: null,
    });
  }

  /** A listener saw the tracked branch of a build_on_push deployment move: a revision of the new head (none if it has it). */
  async branchMoved(scope: ListenerScope, deploymentId: string, head: string): Promise<string | undefined> {
    const deployment = await this.deploymentInScope(scope, deploymentId);
    if (deployment.deleted_at || deployment.source_config.build_on_push !== true) return undefined;
    return this.integrations.revisionForHead(deployment.tenant_id, deploymentId, head);
  }

  async report(scope: ListenerScope, deploymentId: string, report: DeploymentReport): Promise<void> {
    const deployment = await this.deploymentInScope(scope, deploymentId);
    await this.applyReport(deployment, report, new Date().toISOString(), [report.active_revision_id]);
    this.changes.publish("deployment", { change: "reported", deployment_id: deploymentId });
  }

  /** The compute of a deleted deployment is gone: forget it, and its uploaded tarballs. */
  async purge(scope: ListenerScope, deploymentId: string): Promise<void> {
    const deployment = await this.deploymentInScope(scope, deploymentId);
    if (!deployment.deleted_at) throw new NotFoundError(`Deployment ${deploymentId} is not deleted`);
    await this.storage.deployments.purge(deploymentId);
    await rm(join(this.uploadsDir, "deployments", deploymentId), { recursive: true, force: true });
    await this.registry.removeRepositories(deploymentId);
  }

  /** Where the revision's uploaded tarball lies. */
  async sourceFile(scope: ListenerScope, revisionId: string): Promise<string> {
    const revision = await this.revisionInScope(scope, revisionId);
    const path = revision.source_revision_config.source_tarball_path;
    if (typeof path !== "string") throw new NotFoundError(`Revision ${revisionId} has no source tarball`);
    return join(this.uploadsDir, path);
  }

  async appendLogs(scope: ListenerScope, entries: LogEntry[]): Promise<void> {
    for (const deploymentId of new Set(entries.map((entry) => entry.deployment_id)))
      await this.deploymentInScope(scope, deploymentId);
    await this.logs.append(entries);
  }

  /**
   * Keeps metric samples of the listener's deployments; those of a deployment
   * that is gone (deleted, purged) or not the listener's are dropped.
   */
  async pushMetrics(scope: ListenerScope, samples: MetricSample[]): Promise<void> {
    if (!this.metrics) return;
    const live = new Set<string>();
    for (const deploymentId of new Set(samples.map((sample) => sample.deployment_id))) {
      const deployment = await this.deploymentInScope(scope, deploymentId).catch((error: unknown) => {
        if (error instanceof NotFoundError) return undefined;
        throw error;
      });
      if (deployment && !deployment.deleted_at) live.add(deploymentId);
    }
    await this.metrics.record(samples.filter((sample) => live.has(sample.deployment_id)));
  }

  /** May this API key use this deployment's URL? (the router asks, and caches the answer briefly) */
  async authorize(scope: ListenerScope, deploymentId: string, apiKey: string): Promise<Authorization> {
    const deployment = await this.deploymentInScope(scope, deploymentId);
    const key = await this.storage.apiKeys.findByHash(hashApiKey(apiKey));
    if (!key) return "unknown_key";
    if (key.revoked_at || deployment.deleted_at || isTracingOnly(key) || isAuthServiceOnly(key)) return "denied";
    return key.all_tenants || key.tenant_ids.includes(deployment.tenant_id) ? "allowed" : "denied";
  }

  /** Deployment keys known to be registered (registration is idempotent; this saves the write at every poll). */
  private readonly deploymentKeys = new Set<string>();
  /** The assigned revisions of uploaded sources last sent, by revision id, with the record's stamp they were made from. */
  private readonly assigned = new Map<string, { stamp: string; revision: AssignedRevision; usedAt: number }>();

  /**
   * A key of the deployment for one purpose (its traces, or the Auth Service):
   * derived from the secrets key, so it needs no storage of its own; registered on first use.
   */
  private async deploymentKey(deployment: DeploymentRecord, prefix: string): Promise<string> {
    const name = `${prefix}${deployment.id}`;
    const key = `berth_${this.box.derive(name)}`;
    if (!this.deploymentKeys.has(name)) {
      await this.storage.apiKeys.create(apiKeyRecord(key, { name, allTenants: false, tenantIds: [deployment.tenant_id] }));
      this.deploymentKeys.add(name);
    }
    return key;
  }

  private async assignment(deployment: DeploymentRecord, used: Set<string>): Promise<Assignment> {
    const [latest, active, inProgress] = await Promise.all([
      deployment.latest_revision_id ? this.storage.revisions.getAny(deployment.latest_revision_id) : undefined,
      deployment.active_revision_id ? this.storage.revisions.getAny(deployment.active_revision_id) : undefined,
      this.storage.revisions.inStatuses(deployment.id, IN_PROGRESS_REVISION_STATUSES),
    ]);
    // The serving revision is usually the latest: its spec is made once.
    const latestRevision = await this.assignedRevision(latest, used);
    return {
      id: deployment.id,
      tenant_id: deployment.tenant_id,
      name: deployment.name,
      source: deployment.source,
      status: deployment.status,
      deleted: deployment.deleted_at !== null,
      active_revision_id: deployment.active_revision_id,
      latest: latestRevision,
      active: active?.id === latest?.id ? latestRevision : await this.assignedRevision(active, used),
      in_progress_revision_ids: inProgress.map((revision) => revision.id).filter((id) => id !== deployment.latest_revision_id),
      tracing: { project: deployment.name, api_key: await this.deploymentKey(deployment, TRACING_KEY_NAME_PREFIX) },
      auth_service: { api_key: await this.deploymentKey(deployment, AUTH_SERVICE_KEY_NAME_PREFIX) },
      run_webhooks: { secret: runWebhookSecretOf(this.box, deployment.id) },
    };
  }

  private async assignedRevision(revision: RevisionRecord | undefined, used?: Set<string>): Promise<AssignedRevision | null> {
    if (!revision) return null;
    // An uploaded source's revision is made of its record alone (its upload never changes once deployed): while the
    // record does not change, a listener's poll gets what it got before, without reading the upload or decrypting.
    const cacheable = revision.source === "internal_source";
    const stamp = `${revision.updated_at} ${revision.status} ${revision.status_message}`;
    const known = cacheable ? this.assigned.get(revision.id) : undefined;
    used?.add(revision.id);
    if (known?.stamp === stamp) {
      known.usedAt = Date.now();
      return known.revision;
    }
    const made = await this.makeAssignedRevision(revision);
    if (cacheable && made.tarball_sha256) this.assigned.set(revision.id, { stamp, revision: made, usedAt: Date.now() });
    return made;
  }

  private async makeAssignedRevision(revision: RevisionRecord): Promise<AssignedRevision> {
    const path = revision.source_revision_config.source_tarball_path;
    const upload = typeof path === "string" ? await this.storage.uploads.getByPath(path) : undefined;
    const repository = revision.source === "repo_host" ? await this.repositoryOf(revision) : null;
    return {
      id: revision.id,
      number: revision.number,
      status: revision.status,
      status_message: revision.status_message,
      source: revision.source,
      spec: revisionSpecOf(revision, repository),
      // Listeners of the previous release read these instead of spec (docs/control-plane.md).
      source_revision_config: revision.source_revision_config,
      source_config: revision.source_config,
      secret_references: revision.secret_references,
      secrets: revisionSecrets(revision, this.box),
      artifact_revision_id: revision.artifact_revision_id,
      tarball_sha256: upload?.sha256 ?? null,
      registry_auth:
        revision.source === "internal_image" ? ((await this.registry.pullCredential(revision.deployment_id)) ?? null) : null,
      repository,
    };
  }

  /** A repo_host revision's repository, ref and credentials (null when its integration is gone: the build fails saying so). */
  private async repositoryOf(revision: RevisionRecord): Promise<RevisionRepository | null> {
    const integration = await this.storage.integrations.get(revision.tenant_id, String(revision.source_config.integration_id));
    if (!integration) return null;
    return {
      url: String(revision.source_config.repo_url),
      ref: String(revision.source_revision_config.repo_ref),
      credentials: this.integrations.credentialsOf(integration),
      allow_local: integration.kind === "local",
    };
  }

  private async deploymentInScope(scope: ListenerScope, deploymentId: string): Promise<DeploymentRecord> {
    const deployment = await this.storage.deployments.getAny(deploymentId);
    const mine = scope.kind === "embedded" ? null : scope.listenerId;
    if (!deployment || deployment.listener_id !== mine) throw new NotFoundError(`Deployment ${deploymentId} not found`);
    return deployment;
  }

  private async revisionInScope(scope: ListenerScope, revisionId: string): Promise<RevisionRecord> {
    return (await this.revisionAndDeployment(scope, revisionId)).revision;
  }

  private async revisionAndDeployment(scope: ListenerScope, revisionId: string) {
    const revision = await this.storage.revisions.getAny(revisionId);
    if (!revision) throw new NotFoundError(`Revision ${revisionId} not found`);
    return { revision, deployment: await this.deploymentInScope(scope, revision.deployment_id) };
  }
}

/**
 * A replaced revision keeps DEPLOYED (as the hosted platform does), with
 * Replaced=True and Serving=False; its message says it no longer serves too,
 * so a poller reading only the status and message is not misled. It is
 * recorded with the move of the revision replacing it, in one transaction.
 */
function replacedNote(replacedId: string, by: RevisionRecord, at: string): EventAlongside {
  const message = `Replaced by revision ${by.number} (${by.id}) at ${at}: no longer serving`;
  return { revisionId: replacedId, event: { type: "Normal", reason: "Replaced", message } };
}
