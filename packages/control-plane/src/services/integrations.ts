import { ConflictError, ForbiddenError, NotFoundError } from "@berth/service-kit";
import { randomBytes, randomUUID } from "node:crypto";
import {
  checkBaseUrl,
  credentialsOf,
  type GitCredentials,
  localPathUnderRoots,
  repositoriesOf,
  resolvedLocalPath,
  sameRepository,
} from "../domain/git-integrations.js";
import type { IntegrationCreateInput, IntegrationUpdateInput } from "../domain/inputs/integration.js";
import { type Headers, readPushWebhook } from "../domain/push-webhooks.js";
import type { SecretBox } from "../domain/secret-box.js";
import type {
  ControlPlaneStorage,
  IntegrationChange,
  IntegrationKind,
  IntegrationRecord,
  RepositoryRecord,
} from "../storage/types.js";
import type { DeploymentService } from "./deployments.js";
import { listHostRepositories } from "./host-repositories.js";

/** What a push webhook did: the revisions it made (none for another branch, a head already deployed, a replay). */
export interface WebhookOutcome {
  detail: string;
  revisions: string[];
}

/**
 * Who changes an integration. A `local` integration reads the listener's
 * disk, so only the platform's operator may point one at a folder: a key
 * valid for every workspace (the admin key), or the admin command line.
 */
export interface IntegrationActor {
  operator: boolean;
}

/**
 * Where local integrations may read: the folders the operator listed
 * (BERTH_LOCAL_GIT_ROOTS), or `anywhere` for the admin command line when it
 * lists none (whoever runs it holds the control plane's data directory).
 */
export type LocalGitRoots = readonly string[] | "anywhere";

/**
 * Git-host integrations of a workspace: the hosts its repo_host deployments
 * come from, their credentials (encrypted, never answered) and push webhooks.
 */
export class IntegrationService {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly box: SecretBox,
    private readonly deployments: DeploymentService,
    private readonly localGitRoots: LocalGitRoots,
  ) {}

  async list(tenantId: string) {
    return (await this.storage.integrations.list(tenantId)).map((integration) => this.present(integration));
  }

  async get(tenantId: string, id: string) {
    return this.present(await this.find(tenantId, id));
  }

  async create(tenantId: string, input: IntegrationCreateInput, actor: IntegrationActor) {
    if (input.kind === "local") this.checkOperator(actor);
    const secret = input.webhook_secret ?? randomBytes(24).toString("base64url");
    const credentials = credentialsOf(input.credentials);
    const repos = repositoriesOf(input.repos ?? []);
    const baseUrl = checkBaseUrl(input.kind, input.base_url);
    const integration: IntegrationRecord = {
      id: randomUUID(),
      tenant_id: tenantId,
      name: input.name,
      provider: "repo_host",
      installation_id: Math.floor(Date.now() / 1000),
      repos: await this.checkLocal(input.kind, repos, actor),
      created_at: new Date().toISOString(),
      kind: input.kind,
      base_url: input.kind === "local" ? await this.localFolder(baseUrl!, "base_url") : baseUrl,
      credentials_ciphertext: credentials && this.box.encrypt(JSON.stringify(credentials)),
      webhook_secret_ciphertext: this.box.encrypt(secret),
    };
    await this.storage.integrations.create(integration);
    return { ...this.present(integration), webhook_secret: secret };
  }

  async update(tenantId: string, id: string, input: IntegrationUpdateInput, actor: IntegrationActor) {
    const current = await this.find(tenantId, id);
    if (current.kind === "local" && (input.base_url !== undefined || input.repos !== undefined)) this.checkOperator(actor);
    const secret = input.rotate_webhook_secret ? randomBytes(24).toString("base64url") : undefined;
    const credentials = input.credentials === undefined ? undefined : credentialsOf(input.credentials);
    const repos = input.repos && (await this.checkLocal(current.kind, repositoriesOf(input.repos), actor));
    let baseUrl = input.base_url === undefined ? undefined : checkBaseUrl(current.kind, input.base_url);
    if (baseUrl && current.kind === "local") baseUrl = await this.localFolder(baseUrl, "base_url");
    const change: IntegrationChange = {
      name: input.name,
      repos,
      base_url: baseUrl,
      credentials_ciphertext:
        credentials === undefined ? undefined : credentials && this.box.encrypt(JSON.stringify(credentials)),
      webhook_secret_ciphertext: secret && this.box.encrypt(secret),
    };
    const updated = await this.storage.integrations.update(tenantId, id, change);
    if (!updated) throw new NotFoundError(`Integration ${id} not found`);
    return { ...this.present(updated), ...(secret ? { webhook_secret: secret } : {}) };
  }

  /** 409 while a live deployment uses it: its builds would lose their credentials. */
  async delete(tenantId: string, id: string): Promise<void> {
    await this.find(tenantId, id);
    const users = await this.deploymentsOf(tenantId, id);
    if (users.length > 0) {
      throw new ConflictError(
        `Integration ${id} is used by deployment ${users.map((d) => d.name).join(", ")}: delete them first`,
      );
    }
    await this.storage.integrations.delete(tenantId, id);
  }

  /** What the integration may deploy: its registered repositories, and what its host lists (local: its folder). */
  async repos(tenantId: string, id: string) {
    const integration = await this.find(tenantId, id);
    const listed = await listHostRepositories(integration, this.credentialsOf(integration));
    const all = [
      ...integration.repos,
      ...listed.filter((repo) => !integration.repos.some((r) => sameRepository(r.url, repo.url))),
    ];
    return all.map((repo) => ({ host_integration_id: integration.id, ...repo }));
  }

  /**
   * A local integration's registered repositories, resolved under the roots;
   * only the operator may name them (the folder itself: localFolder).
   */
  private async checkLocal(kind: IntegrationKind, repos: RepositoryRecord[], actor: IntegrationActor) {
    if (kind !== "local") return repos;
    this.checkOperator(actor);
    return Promise.all(repos.map(async (repo, index) => ({ ...repo, url: await this.localFolder(repo.url, `repos[${index}]`) })));
  }

  private checkOperator(actor: IntegrationActor): void {
    if (!actor.operator) {
      throw new ForbiddenError(
        "Only the platform's operator may point a local integration at a folder (an admin key, or `berth control-plane integrations add`)",
      );
    }
  }

  /** The folder with its symlinks resolved, when the roots allow it (the command line with no roots listed: any folder). */
  private localFolder(path: string, field: string): Promise<string> {
    const roots = this.localGitRoots;
    return roots === "anywhere" ? resolvedLocalPath(path, field) : localPathUnderRoots(path, roots, field);
  }

  /** The credentials a listener fetches the integration's repositories with. */
  credentialsOf(integration: IntegrationRecord): GitCredentials | null {
    return integration.credentials_ciphertext
      ? (JSON.parse(this.box.decrypt(integration.credentials_ciphertext)) as GitCredentials)
      : null;
  }

  /**
   * A push webhook: verified with the integration's secret (401 otherwise;
   * an unknown integration is a 404), once per delivery id. Each live
   * deployment tracking the pushed branch of that repository with
   * build_on_push gets a new revision of the head, unless one of its
   * revisions is or was of that commit (a replay under a new delivery id).
   */
  async receiveWebhook(id: string, headers: Headers, body: Buffer): Promise<WebhookOutcome> {
    const integration = await this.storage.integrations.getAny(id);
    if (!integration?.webhook_secret_ciphertext) throw new NotFoundError(`Integration ${id} not found`);
    const delivery = readPushWebhook(integration.kind, headers, body, this.box.decrypt(integration.webhook_secret_ciphertext));
    if (delivery.kind !== "push") return { detail: `Ignored: ${delivery.event}`, revisions: [] };
    const first = await this.storage.integrations.recordDelivery(id, delivery.deliveryId, new Date().toISOString());
    if (!first) return { detail: `Delivery ${delivery.deliveryId} was handled already`, revisions: [] };
    const revisions: string[] = [];
    for (const deployment of await this.deploymentsOf(integration.tenant_id, id)) {
      const { source_config: config } = deployment;
      const latest = await this.storage.revisions.latest(deployment.id);
      const ref = String(latest?.source_revision_config.repo_ref ?? "");
      const tracked = ref.startsWith("refs/") ? ref : `refs/heads/${ref}`;
      if (config.build_on_push !== true || tracked !== delivery.ref) continue;
      if (!delivery.repositoryUrls.some((url) => sameRepository(url, String(config.repo_url)))) continue;
      // A captured delivery replayed under a new delivery id names a commit the deployment had: it must not rebuild it.
      if (await this.hadCommit(integration.tenant_id, deployment.id, delivery.after)) continue;
      const revision = await this.deployments.revisionForPush(integration.tenant_id, deployment.id, delivery.after);
      if (revision) revisions.push(revision);
    }
    return { detail: `${revisions.length} revision(s) for ${delivery.ref} at ${delivery.after}`, revisions };
  }

  /** Whether a revision of the deployment, of any status, is or was of that commit. */
  private async hadCommit(tenantId: string, deploymentId: string, sha: string): Promise<boolean> {
    for (let offset = 0; ; offset += 100) {
      const page = await this.storage.revisions.list(tenantId, deploymentId, { limit: 100, offset });
      if (page.some((revision) => revision.source_revision_config.repo_commit_sha === sha)) return true;
      if (page.length < 100) return false;
    }
  }

  /**
   * A new head of a deployment's tracked branch, seen by its listener's poll:
   * a revision unless it is the head the deployment last fetched. A rollback
   * (a redeploy of an older commit) stays until the branch moves, as it would
   * with webhooks, even when a restarted listener no longer knows what it saw.
   */
  async revisionForHead(tenantId: string, deploymentId: string, head: string): Promise<string | undefined> {
    if ((await this.lastFetchedHead(tenantId, deploymentId)) === head) return undefined;
    return this.deployments.revisionForPush(tenantId, deploymentId, head);
  }

  /** The commit of the deployment's newest revision that fetched its branch (a redeploy fetches none). */
  private async lastFetchedHead(tenantId: string, deploymentId: string): Promise<unknown> {
    for (let offset = 0; ; offset += 100) {
      const page = await this.storage.revisions.list(tenantId, deploymentId, { limit: 100, offset });
      const fetched = page.find((revision) => revision.artifact_revision_id === null);
      if (fetched) return fetched.source_revision_config.repo_commit_sha;
      if (page.length < 100) return undefined;
    }
  }

  private async deploymentsOf(tenantId: string, integrationId: string) {
    const found = [];
    for (let offset = 0; ; offset += 100) {
      const page = await this.storage.deployments.list(tenantId, { limit: 100, offset });
      found.push(...page.filter((deployment) => deployment.source_config.integration_id === integrationId));
      if (page.length < 100) return found;
    }
  }

  private async find(tenantId: string, id: string): Promise<IntegrationRecord> {
    const integration = await this.storage.integrations.get(tenantId, id);
    if (!integration) throw new NotFoundError(`Integration ${id} not found`);
    return integration;
  }

  private present(integration: IntegrationRecord) {
    const credentials = this.credentialsOf(integration);
    return {
      id: integration.id,
      name: integration.name,
      provider: integration.provider,
      installation_id: integration.installation_id,
      kind: integration.kind,
      base_url: integration.base_url,
      credentials: credentials?.kind ?? null,
      webhook_url: `/v1/integrations/repo_host/${integration.id}/webhook`,
      created_at: integration.created_at,
    };
  }
}
