import { BadRequestError, NotFoundError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import {
  checkBuildOnPush,
  checkGraphConfigPath,
  checkListener,
  checkRepository,
  checkRequiredOnCreate,
  checkSourceComplete,
  checkTarballPath,
  complete,
  initialRevisionStatus,
  normalizeSourceConfigFields,
  refuseFieldsOfOtherSources,
  refuseImmutableChanges,
  refuseReadOnly,
  setFields,
  SOURCE_CONFIG_FIELDS,
  SOURCE_REVISION_CONFIG_FIELDS,
} from "../domain/deployment-rules.js";
import { answerInItsNames, readCreate, readPatch, type SpecCreate, type SpecPatch } from "../domain/hosted-dialect.js";
import type { SecretBox } from "../domain/secret-box.js";
import { checkSecretReferences, resolveSecrets } from "../domain/secrets.js";
import type { DeploymentCreateInput, DeploymentPatchInput } from "../domain/inputs/deployment.js";
import type {
  ControlPlaneStorage,
  DeploymentChange,
  DeploymentFilter,
  DeploymentRecord,
  NewRevision,
  RevisionRecord,
} from "../storage/types.js";
import { presentDeployment, revisionSecrets } from "./deployment-views.js";
import { conditionsOfDeployments, presentRevisionWithConditions, type Revision } from "./status-conditions.js";
import type { ChangeFeed, RevisionCause } from "./change-feed.js";

export type Deployment = ReturnType<typeof presentDeployment>;

/** The ids of a bulk delete, in request order without repeats, split by whether they were deleted. */
export interface BulkDeleteResult {
  deleted: string[];
  missing: string[];
}

export class DeploymentService {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly box: SecretBox,
    private readonly changes: ChangeFeed,
  ) {}

  async create(tenantId: string, request: DeploymentCreateInput): Promise<Deployment> {
    const { body, hosted } = readCreate(request);
    return answerInItsNames(hosted, () => this.createDeployment(tenantId, body, hosted));
  }

  private async createDeployment(tenantId: string, body: SpecCreate, hosted: boolean): Promise<Deployment> {
    refuseReadOnly(body, body.source_revision_config);
    const { source } = body;
    const sourceConfig = setFields(body.source_config);
    const revisionConfig = setFields(body.source_revision_config);
    refuseFieldsOfOtherSources(source, sourceConfig, revisionConfig, body.secret_references, hosted);
    checkRequiredOnCreate(source, sourceConfig, revisionConfig, hosted);
    if (revisionConfig.graph_config_path) checkGraphConfigPath(revisionConfig.graph_config_path);
    if (revisionConfig.source_tarball_path) checkTarballPath(revisionConfig.source_tarball_path, undefined, undefined);
    if (source === "repo_host") {
      const integration = await this.storage.integrations.get(tenantId, sourceConfig.integration_id!);
      checkRepository(sourceConfig.integration_id, sourceConfig.repo_url, integration);
    }
    const listener = sourceConfig.listener_id ? await this.storage.listeners.get(tenantId, sourceConfig.listener_id) : undefined;
    checkListener(sourceConfig.listener_id, sourceConfig.listener_config, listener);
    // Which listener runs it: the one named, else the workspace's default, else the embedded one (null).
    const listenerId = sourceConfig.listener_id ?? (await this.storage.listeners.defaultOf(tenantId))?.id ?? null;
    checkBuildOnPush(sourceConfig.build_on_push, revisionConfig.repo_ref);
    const secrets = resolveSecrets(body.secrets, []);
    checkSecretReferences(body.secret_references ?? null, secrets);

    const now = new Date().toISOString();
    const deployment: DeploymentRecord = {
      id: randomUUID(),
      tenant_id: tenantId,
      name: body.name,
      source,
      source_config: complete(SOURCE_CONFIG_FIELDS, normalizeSourceConfigFields(sourceConfig)),
      secret_references: body.secret_references ?? null,
      status: "AWAITING_DATABASE",
      latest_revision_id: null,
      active_revision_id: null,
      image_version: null,
      listener_id: listenerId,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    const revision = this.newRevision(deployment, complete(SOURCE_REVISION_CONFIG_FIELDS, revisionConfig), secrets, now);
    await this.storage.deployments.create(deployment, revision, {
      id: randomUUID(),
      tenant_id: tenantId,
      name: body.name,
      deployment_id: deployment.id,
      created_at: now,
    });
    this.created(deployment, { ...revision, number: 1 }, "create");
    return this.get(tenantId, deployment.id);
  }

  async get(tenantId: string, id: string): Promise<Deployment> {
    const deployment = await this.storage.deployments.get(tenantId, id);
    if (!deployment) throw notFound(id);
    return this.present(deployment);
  }

  async list(tenantId: string, filter: DeploymentFilter): Promise<{ resources: Deployment[]; offset: number }> {
    const deployments = await this.storage.deployments.list(tenantId, filter);
    const resources = await this.presentAll(deployments);
    return { resources, offset: filter.offset + resources.length };
  }

  async patch(tenantId: string, id: string, request: DeploymentPatchInput): Promise<Deployment> {
    const { body, hosted } = readPatch(request);
    return answerInItsNames(hosted, () => this.patchDeployment(tenantId, id, body, hosted));
  }

  private async patchDeployment(tenantId: string, id: string, body: SpecPatch, hosted: boolean): Promise<Deployment> {
    refuseReadOnly(body, body.source_revision_config);
    const requestedConfig = setFields(body.source_config);
    if (body.resource_spec) {
      if (requestedConfig.resource_spec) {
        throw new BadRequestError("resource_spec is given twice: at the top level and in source_config; send one");
      }
      requestedConfig.resource_spec = body.resource_spec;
    }
    const revisionConfig = setFields(body.source_revision_config);
    // The upload a tarball path names never changes once uploaded, so it can be read before the deployment is locked.
    const upload = revisionConfig.source_tarball_path
      ? await this.storage.uploads.getByPath(revisionConfig.source_tarball_path)
      : undefined;

    const result = await this.storage.deployments.update(tenantId, id, (deployment, latest): DeploymentChange => {
      const { source } = deployment;
      if (body.name !== undefined && body.name !== deployment.name) throw new BadRequestError("name is immutable");
      if (body.source !== undefined && body.source !== source) throw new BadRequestError("source is immutable");
      if (body.revision_source && body.revision_source !== source) {
        throw new BadRequestError(`revision_source ${body.revision_source} does not match the deployment's source ${source}`);
      }
      refuseFieldsOfOtherSources(source, requestedConfig, revisionConfig, body.secret_references, hosted);
      refuseImmutableChanges(deployment.source_config, requestedConfig);
      if (revisionConfig.graph_config_path) checkGraphConfigPath(revisionConfig.graph_config_path);
      if (revisionConfig.source_tarball_path) checkTarballPath(revisionConfig.source_tarball_path, deployment.id, upload);
      const sourceConfig = { ...deployment.source_config, ...normalizeSourceConfigFields(requestedConfig) };
      const nextRevisionConfig = { ...latest.source_revision_config, ...revisionConfig };
      checkBuildOnPush(sourceConfig.build_on_push, nextRevisionConfig.repo_ref);
      checkSourceComplete(source, nextRevisionConfig);

      const makesRevision =
        Object.keys(revisionConfig).length > 0 || !!body.secrets || !!requestedConfig.resource_spec || !!body.secret_references;
      const now = new Date().toISOString();
      const secretReferences = body.secret_references ?? deployment.secret_references;
      if (!makesRevision) return { source_config: sourceConfig, secret_references: secretReferences, updated_at: now };
      const previousSecrets = revisionSecrets(latest, this.box);
      const secrets = body.secrets ? resolveSecrets(body.secrets, previousSecrets) : previousSecrets;
      checkSecretReferences(secretReferences, secrets);
      if (Object.keys(revisionConfig).length > 0) nextRevisionConfig.repo_commit_sha = null;
      const next = { ...deployment, source_config: sourceConfig, secret_references: secretReferences };
      return {
        source_config: sourceConfig,
        secret_references: secretReferences,
        updated_at: now,
        revision: this.newRevision(next, nextRevisionConfig, secrets, now),
      };
    });
    if (!result) throw notFound(id);
    if (result.revision) this.created(result.deployment, result.revision, "patch");
    else this.changes.publish("deployment", { change: "updated", deployment_id: id });
    // The revision this PATCH made, not the latest when it is read again: a concurrent PATCH may have made a newer one.
    return this.present(result.deployment, result.revision);
  }

  async delete(tenantId: string, id: string, deleteTracingProject: boolean): Promise<void> {
    const deleted = await this.storage.deployments.markDeleted(tenantId, [id], deleteTracingProject, new Date().toISOString());
    if (deleted.length === 0) throw notFound(id);
    this.changes.publish("deployment", { change: "deleted", deployment_id: id });
  }

  async bulkDelete(tenantId: string, ids: string[]): Promise<BulkDeleteResult> {
    const unique = [...new Set(ids)];
    const deleted = new Set(await this.storage.deployments.markDeleted(tenantId, unique, false, new Date().toISOString()));
    for (const deploymentId of deleted) this.changes.publish("deployment", { change: "deleted", deployment_id: deploymentId });
    return { deleted: unique.filter((id) => deleted.has(id)), missing: unique.filter((id) => !deleted.has(id)) };
  }

  /**
   * A new revision with the latest one's configuration and secrets: built (or
   * pulled) and deployed again, e.g. after an image was pushed under the same
   * tag. Always a revision, where a PATCH without changes makes none.
   */
  async createRevision(tenantId: string, id: string): Promise<Revision> {
    const result = await this.storage.deployments.update(tenantId, id, (deployment, latest) => {
      const now = new Date().toISOString();
      checkSourceComplete(deployment.source, latest.source_revision_config);
      return {
        source_config: deployment.source_config,
        secret_references: deployment.secret_references,
        updated_at: now,
        revision: this.newRevision(deployment, latest.source_revision_config, revisionSecrets(latest, this.box), now),
      };
    });
    if (!result?.revision) throw notFound(id);
    this.created(result.deployment, result.revision, "rebuild");
    return presentRevisionWithConditions(this.storage, result.deployment, result.revision);
  }

  /**
   * A push to a repo_host deployment's tracked branch: a new revision of the
   * pushed head (the listener fetches the branch and records the head it
   * got), unless the latest revision already has that head. Undefined when nothing changed.
   */
  async revisionForPush(tenantId: string, id: string, head: string): Promise<string | undefined> {
    const result = await this.storage.deployments.update(tenantId, id, (deployment, latest) => {
      const now = new Date().toISOString();
      const unchanged = {
        source_config: deployment.source_config,
        secret_references: deployment.secret_references,
        updated_at: now,
      };
      if (latest.source_revision_config.repo_commit_sha === head) return unchanged;
      const revisionConfig = { ...latest.source_revision_config, repo_commit_sha: head };
      const revision = this.newRevision(deployment, revisionConfig, revisionSecrets(latest, this.box), now);
      return { ...unchanged, revision: { ...revision, status_message: `Push of ${head.slice(0, 12)}: waiting for a listener` } };
    });
    if (result?.revision) this.created(result.deployment, result.revision, "push");
    return result?.revision?.id;
  }

  /**
   * Rollback: a new revision that deploys a deployed revision's built artifact
   * again, with its configuration and secrets. A repo_host revision keeps its
   * commit: the listener serves that commit's build, or builds exactly that
   * commit again, never the branch's newer head.
   */
  async redeploy(tenantId: string, id: string, revisionId: string): Promise<Deployment> {
    const target = await this.storage.revisions.get(tenantId, id, revisionId);
    if (!target) throw new NotFoundError(`Revision ${revisionId} not found`);
    if (target.status !== "DEPLOYED") {
      throw new BadRequestError(
        `Only a revision that was deployed can be redeployed; revision ${revisionId} is ${target.status}`,
      );
    }
    const result = await this.storage.deployments.update(tenantId, id, (deployment) => {
      const now = new Date().toISOString();
      const sourceConfig = { ...deployment.source_config, resource_spec: target.source_config.resource_spec ?? null };
      return {
        source_config: sourceConfig,
        secret_references: target.secret_references,
        updated_at: now,
        revision: {
          id: randomUUID(),
          status: "QUEUED",
          status_message: redeployMessage(target),
          source: deployment.source,
          source_revision_config: target.source_revision_config,
          source_config: target.source_config,
          secret_references: target.secret_references,
          secrets_ciphertext: target.secrets_ciphertext,
          artifact_revision_id: target.artifact_revision_id ?? target.id,
          created_at: now,
          updated_at: now,
        },
      };
    });
    if (!result) throw notFound(id);
    if (result.revision) this.created(result.deployment, result.revision, "redeploy");
    return this.present(result.deployment);
  }

  /** A revision was made, so its deployment's listener has work. */
  private created(
    deployment: DeploymentRecord,
    revision: Pick<RevisionRecord, "id" | "number" | "status" | "status_message">,
    cause: RevisionCause,
  ): void {
    this.changes.publish("deployment", { change: cause === "create" ? "created" : "updated", deployment_id: deployment.id });
    this.changes.publish("revision", {
      kind: "created",
      cause,
      deployment: { id: deployment.id, name: deployment.name },
      revision: { id: revision.id, number: revision.number },
      status: revision.status,
      message: revision.status_message,
    });
  }

  private newRevision(
    deployment: DeploymentRecord,
    sourceRevisionConfig: Record<string, unknown>,
    secrets: { name: string; value: string }[],
    now: string,
    artifactRevisionId: string | null = null,
  ): NewRevision {
    const { status, message } = initialRevisionStatus(deployment.source, sourceRevisionConfig);
    return {
      id: randomUUID(),
      status,
      status_message: message,
      source: deployment.source,
      source_revision_config: sourceRevisionConfig,
      source_config: deployment.source_config,
      secret_references: deployment.secret_references,
      secrets_ciphertext: this.box.encrypt(JSON.stringify(secrets)),
      artifact_revision_id: artifactRevisionId,
      created_at: now,
      updated_at: now,
    };
  }

  /** `latest`: the revision to show the configuration of, when not the latest as read now. */
  private async present(deployment: DeploymentRecord, latest?: RevisionRecord): Promise<Deployment> {
    const [presented] = await this.presentShown([{ deployment, latest: latest ?? (await this.latestOf(deployment)) }]);
    return presented!;
  }

  /** Deployments with their latest revisions, their conditions read for all of them at once. */
  private async presentAll(deployments: readonly DeploymentRecord[]): Promise<Deployment[]> {
    const latest = await this.storage.revisions.latestOfEach(deployments.map((deployment) => deployment.id));
    return this.presentShown(
      deployments.map((deployment) => ({ deployment, latest: latestRevision(deployment, latest.get(deployment.id)) })),
    );
  }

  private async presentShown(shown: { deployment: DeploymentRecord; latest: RevisionRecord }[]): Promise<Deployment[]> {
    const conditions = await conditionsOfDeployments(this.storage, shown);
    return shown.map(({ deployment, latest }, index) => presentDeployment(deployment, latest, this.box, conditions[index]!));
  }

  private async latestOf(deployment: DeploymentRecord): Promise<RevisionRecord> {
    return latestRevision(deployment, await this.storage.revisions.latest(deployment.id));
  }
}

/** Every deployment is created with its first revision: one without is a broken record, not a 404. */
function latestRevision(deployment: DeploymentRecord, latest: RevisionRecord | undefined): RevisionRecord {
  if (!latest) throw new Error(`deployment ${deployment.id} has no revision`);
  return latest;
}

function redeployMessage(target: RevisionRecord): string {
  const of = `Redeploy of revision ${target.number} (${target.id})`;
  const sha = target.source_revision_config.repo_commit_sha;
  if (target.source === "repo_host" && typeof sha === "string")
    return `${of}: commit ${sha.slice(0, 12)}, from its build if the listener still has it, else built again`;
  return `${of}: its built artifact, without a build`;
}

export const notFound = (id: string) => new NotFoundError(`Deployment ${id} not found`);
