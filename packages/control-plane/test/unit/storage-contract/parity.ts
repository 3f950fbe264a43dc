// The same script of calls to every store against SQLite and PostgreSQL must
// give the same results, records with their keys in the same order.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { ConflictError } from "@berth/service-kit";
import { IN_PROGRESS_REVISION_STATUSES } from "@berth/listener-protocol";
import { createPostgresStorage } from "../../../src/storage/postgres/index.js";
import { createSqliteStorage } from "../../../src/storage/sqlite/index.js";
import type { OAuthTokenRecord } from "../../../src/storage/auth-types.js";
import type { ControlPlaneStorage, LogFilter, LogKind } from "../../../src/storage/types.js";
import {
  newApiKey,
  newConnection,
  newDeployment,
  newFlow,
  newListener,
  newProvider,
  newToken,
  nextRevision,
} from "./fixtures.js";
import { freshSchema } from "./postgres-schema.js";

/** Every result (or error) of a fixed script of calls, in order; ids and times are fixed too. */
async function script(s: ControlPlaneStorage): Promise<unknown[]> {
  const log: unknown[] = [];
  let time = 0;
  const at = () => new Date(Date.parse("2025-06-01T00:00:00.000Z") + ++time * 1000).toISOString();
  const step = async (work: () => Promise<unknown>) => {
    try {
      log.push({ ok: await work() });
    } catch (err) {
      log.push({ error: (err as Error).constructor.name, message: (err as Error).message });
    }
  };
  const T = "tenant-a";
  await step(() => s.tenants.create({ id: T, name: "A", created_at: at() }));
  await step(() => s.tenants.create({ id: "tenant-b", name: "B", created_at: at() }));
  await step(() => s.tenants.list());
  await step(() => s.apiKeys.create({ ...newApiKey("h1"), id: "k1", created_at: at(), tenant_ids: [T] }));
  await step(() => s.apiKeys.create({ ...newApiKey("h1"), id: "k2", created_at: at(), all_tenants: true }));
  await step(() => s.apiKeys.create({ ...newApiKey("h2"), id: "k0", created_at: "2025-06-01T00:00:03.000Z" }));
  await step(() => s.apiKeys.list());
  await step(() => s.apiKeys.revoke("k1", at()));
  await step(() => s.apiKeys.revoke("k1", at()));
  await step(() => s.apiKeys.findByHash("h1"));

  const listener = { ...newListener(T, "c-1", "l-1", true), created_at: at(), updated_at: at() };
  await step(() => s.listeners.create(listener));
  await step(() => s.listeners.defaultOf(T));
  // A refused new default leaves the previous one marked.
  await step(() => s.listeners.create({ ...listener, id: "l-2" }));
  await step(() => s.listeners.defaultOf(T));
  await step(() =>
    s.listeners.create({ ...listener, id: "l-3", compute_id: "c-3", compute_config: { cluster_namespaces: null } }),
  );
  await step(() => s.listeners.list(T, 10, 0));
  await step(() => s.listeners.create({ ...newListener("tenant-b", "c-1", "l-b"), created_at: at(), updated_at: at() }));
  await step(() => s.listeners.defaultOf("tenant-b"));
  const listenerChange = (isDefault: boolean) => ({
    compute_config: { cluster_namespaces: ["x"] },
    version: "2.0.0",
    default: isDefault,
    updated_at: at(),
  });
  await step(() => s.listeners.update(T, "l-1", listenerChange(true)));
  await step(() => s.listeners.list(T, 10, 0));
  await step(() => s.listeners.update(T, "l-1", listenerChange(false)));
  await step(() => s.listeners.defaultOf(T));
  await step(() => s.listeners.update(T, "l-3", listenerChange(true)));
  await step(() => s.listeners.update("tenant-b", "l-b", listenerChange(true)));
  await step(() => s.listeners.defaultOf(T));
  await step(() => s.listeners.defaultOf("tenant-b"));
  // Another workspace's listener is not found, and its default stays.
  await step(() => s.listeners.update("tenant-b", "l-1", listenerChange(false)));
  await step(() => s.listeners.defaultOf(T));
  await step(() => s.listeners.list(T, 10, 0));

  const names = ["Émile", "émile_x", "Alpha%", "alpha_beta", "plain"];
  for (const [i, name] of names.entries()) {
    const made = newDeployment(T, name, {
      id: `d-${i}`,
      revisionId: `r-${i}-1`,
      at: i === 3 ? "2025-06-01T00:00:30.000Z" : at(),
      sourceConfig: {
        listener_id: i === 0 ? "l-1" : null,
        deployment_type: i % 2 ? "prod" : "dev",
        nested: { list: [1, "two", null] },
      },
      deployment: { secret_references: i === 1 ? [{ name: "S", secret_name: "s", secret_key: "v" }] : null },
    });
    if (i === 4) made.deployment.created_at = made.deployment.updated_at = "2025-06-01T00:00:30.000Z";
    await step(() =>
      s.deployments.create(made.deployment, made.revision, { ...made.project, id: `tp-${i}`, name: i === 2 ? "shared" : name }),
    );
  }
  const dup = newDeployment(T, "plain", { id: "d-dup", revisionId: "r-dup", at: at() });
  await step(() => s.deployments.create(dup.deployment, dup.revision, { ...dup.project, id: "tp-dup" }));
  await step(() => s.tracingProjects.getByName(T, "plain"));
  for (const filter of [
    {},
    { name_contains: "ÉMILE" },
    { name_contains: "émile" },
    { name_contains: "mile" },
    { name_contains: "_" },
    { name_contains: "%" },
    { name_contains: "A%" },
    { statuses: ["AWAITING_DATABASE"], deployment_type: "prod" },
    { deployment_ids: ["d-4", "d-0", "nope"] },
    { limit: 2, offset: 2 },
  ]) {
    await step(() => s.deployments.list(T, { limit: 10, offset: 0, ...filter }));
  }
  for (let n = 0; n < 3; n++) {
    await step(() =>
      s.deployments.update(T, "d-1", (deployment, latest) => ({
        source_config: { ...deployment.source_config, n },
        secret_references: n === 2 ? null : deployment.secret_references,
        updated_at: at(),
        // The last one a redeploy of the first revision's artifact.
        revision:
          n === 1 ? undefined : { ...nextRevision(latest, `r-1-u${n}`, at()), artifact_revision_id: n === 2 ? "r-1-1" : null },
      })),
    );
  }
  await step(() => s.revisions.events("r-1-u2"));
  await step(() => s.revisions.transition("r-1-u2", ["QUEUED"], "BUILDING", "building", at()));
  await step(() => s.revisions.inStatuses("d-1", IN_PROGRESS_REVISION_STATUSES));
  await step(() => s.revisions.transition("r-1-u2", ["BUILDING"], "DEPLOYED", "done", at()));
  await step(() => s.revisions.transition("r-1-u2", ["BUILDING"], "DEPLOYED", "again", at()));
  await step(() => s.revisions.transition("r-1-u2", [], "DEPLOYED", "never", at()));
  await step(() => s.revisions.transition("missing", ["QUEUED"], "DEPLOYED", "never", at()));
  const restarted = { type: "Warning" as const, reason: "ServerRestarted", message: "exited, restarted" };
  await step(() => s.revisions.recordEvent("r-1-u2", restarted, at()));
  await step(() => s.revisions.recordEvent("r-1-u2", { ...restarted, type: "Normal", reason: "Replaced" }, at(), "replaced"));
  await step(() => s.revisions.recordEvent("missing", restarted, at()));
  const condition = (type: string) => ({
    type,
    status: "True" as const,
    reason: type,
    message: `${type} é`,
    last_transition_time: at(),
    observed_generation: 3,
  });
  const observed = { serving_revision_id: "r-1-u2", healthy: true, reason: "Healthy", message: "ok" };
  await step(() =>
    s.conditions.record("d-1", {
      status: "READY",
      conditions: [condition("Serving"), condition("Healthy")],
      observed,
      revisions: [{ id: "r-1-u2", conditions: [condition("Built"), condition("Serving")] }],
    }),
  );
  await step(() => s.conditions.conditionsOf(["d-1", "r-1-u2", "r-1-1", "missing"]));
  await step(() => s.conditions.observedOf(["d-1", "d-0", "missing"]));
  await step(() => s.conditions.observedOf([]));
  for (const id of ["r-1-1", "r-1-u0", "r-1-u2", "r-0-1", "missing"]) await step(() => s.revisions.events(id));
  await step(() => s.revisions.inStatuses("d-1", IN_PROGRESS_REVISION_STATUSES));
  await step(() => s.revisions.inStatuses("d-1", ["SKIPPED", "DEPLOYED"]));
  await step(() => s.revisions.inStatuses("d-1", []));
  await step(() => s.revisions.inStatuses("d-4", ["QUEUED"]));
  await step(() => s.revisions.getAny("r-1-u2"));
  await step(() => s.revisions.getAny("missing"));
  await step(() => s.deployments.getAny("d-1"));
  await step(() => s.deployments.getAny("missing"));
  await step(() => s.revisions.list(T, "d-1", { limit: 10, offset: 0 }));
  await step(() => s.revisions.list(T, "d-1", { limit: 10, offset: 0, statuses: ["SKIPPED"] }));
  await step(() => s.revisions.get(T, "d-1", "r-1-1"));
  await step(() =>
    s.deployments.update(T, "d-1", () => {
      throw new ConflictError("planned failure");
    }),
  );
  const other = newDeployment("tenant-b", "elsewhere", { id: "d-b", revisionId: "r-b-1", at: at() });
  await step(() => s.deployments.create(other.deployment, other.revision, { ...other.project, id: "tp-b" }));
  const onB = newDeployment("tenant-b", "on-l-b", {
    id: "d-b2",
    revisionId: "r-b2-1",
    at: at(),
    sourceConfig: { listener_id: "l-b" },
  });
  await step(() => s.deployments.create(onB.deployment, onB.revision, { ...onB.project, id: "tp-b2" }));
  await step(() => s.deployments.assigned(null));
  await step(() => s.deployments.assigned("l-1"));
  await step(() => s.deployments.assigned("l-b"));
  await step(() => s.deployments.assigned("l-3"));
  await step(() => s.listeners.delete(T, "l-1"));
  await step(() => s.deployments.markDeleted(T, ["d-0", "d-9", "d-2", "d-0"], true, at()));
  await step(() => s.deployments.assigned("l-1")); // deleted ones are still assigned
  await step(() => s.deployments.getAny("d-0"));
  await step(() => s.revisions.getAny("r-0-1"));
  await step(() => s.tracingProjects.getByName(T, "shared"));
  await step(() => s.listeners.delete(T, "l-1"));
  await step(() => s.listeners.list(T, 10, 0));
  await step(() => s.deployments.get(T, "d-0"));
  await step(() => s.revisions.latest("d-0"));
  await step(() =>
    s.uploads.create({
      object_path: "p/1",
      upload_id: "u-1",
      deployment_id: "d-1",
      tenant_id: T,
      created_at: at(),
      expires_at: at(),
      uploaded_at: null,
      size_bytes: null,
      sha256: null,
    }),
  );
  await step(() => s.uploads.markUploaded("u-1", 1234, "f".repeat(64), at()));
  await step(() => s.uploads.getByPath("p/1"));
  await step(() =>
    s.integrations.create({
      id: "i-1",
      tenant_id: T,
      name: "org",
      provider: "repo_host",
      installation_id: 42,
      repos: [{ id: 7, name: "r", owner: "o", url: "u", default_branch: "main" }],
      created_at: at(),
      kind: "gitlab",
      base_url: "https://gitlab.example.com",
      credentials_ciphertext: "c",
      webhook_secret_ciphertext: "w",
    }),
  );
  await step(() => s.integrations.update(T, "i-1", { name: "renamed", base_url: null }));
  await step(() => s.integrations.recordDelivery("i-1", "d", at()));
  await step(() => s.integrations.recordDelivery("i-1", "d", at()));
  await step(() => s.integrations.list(T));
  await step(() => s.deployments.list(T, { limit: 10, offset: 0 }));

  // Reports of listeners.
  await step(() =>
    s.deployments.report(
      "d-1",
      { status: "READY", active_revision_id: "r-1-u2", custom_url: "https://d1.example", image_version: "v1" },
      at(),
    ),
  );
  await step(() => s.deployments.getAny("d-1"));
  await step(() => s.deployments.report("d-1", {}, at()));
  await step(() => s.deployments.getAny("d-1"));
  await step(() => s.deployments.report("d-1", { active_revision_id: null, custom_url: null }, at()));
  await step(() => s.deployments.get(T, "d-1"));
  await step(() => s.deployments.report("d-1", { status: "UNUSED", image_version: null }, at()));
  await step(() => s.deployments.get(T, "d-1"));
  await step(() =>
    s.deployments.report(
      "d-0",
      { status: "READY", active_revision_id: "r-0-1", custom_url: "https://gone", image_version: "v9" },
      at(),
    ),
  );
  await step(() => s.deployments.getAny("d-0"));
  await step(() => s.deployments.report("missing", { status: "READY" }, at()));
  await step(() => s.deployments.getAny("missing"));

  // Logs.
  const entry = (
    deploymentId: string,
    revisionId: string | null,
    kind: LogKind,
    second: number,
    level: string,
    message: string,
  ) => ({
    deployment_id: deploymentId,
    revision_id: revisionId,
    kind,
    timestamp: new Date(Date.parse("2025-07-01T00:00:00.000Z") + second * 1000).toISOString(),
    level,
    message,
  });
  await step(() =>
    s.logs.append([
      entry("d-1", "r-1-1", "build", 1, "info", "Building image"),
      entry("d-1", "r-1-1", "build", 2, "error", "Build ERROR: exit 1"),
      entry("d-1", "r-1-u2", "build", 3, "info", "Reusing 100% of the cache"),
      entry("d-1", "r-1-u2", "build", 3, "warn", "ÉRROR in layer_2"),
      entry("d-1", "r-1-u2", "deploy", 4, "info", "Server started"),
      entry("d-1", "r-1-u2", "deploy", 5, "error", "Unhandled error in run"),
      entry("d-1", null, "deploy", 6, "info", "Router: deployment ready"),
      entry("d-0", "r-0-1", "deploy", 7, "info", "gone soon"),
    ]),
  );
  await step(() => s.logs.append([]));
  await step(() => s.logs.append([entry("d-1", "r-1-u2", "build", 8, "info", "Built in 1.0 s")]));
  const logs = (filter: Partial<LogFilter>) =>
    step(() => s.logs.query({ deployment_id: "d-1", kind: "build", order: "asc", limit: 100, offset: 0, ...filter }));
  await logs({});
  await logs({ order: "desc" });
  await logs({ order: "desc", limit: 2, offset: 1 });
  await logs({ order: "asc", limit: 2, offset: 3 });
  await logs({ offset: 50 });
  await logs({ revision_id: "r-1-u2" });
  await logs({ revision_id: "r-1-u2", order: "desc" });
  await logs({ revision_id: "missing" });
  await logs({ level: "info" });
  await logs({ level: "INFO" });
  await logs({ query: "error" });
  await logs({ query: "ÉRROR" });
  await logs({ query: "érror" });
  await logs({ query: "%" });
  await logs({ query: "_" });
  await logs({ query: "" });
  await logs({ start_time: "2025-07-01T00:00:03.000Z" });
  await logs({ end_time: "2025-07-01T00:00:03.000Z", order: "desc" });
  await logs({ start_time: "2025-07-01T00:00:02.000Z", end_time: "2025-07-01T00:00:03.000Z" });
  await logs({ start_time: "2025-07-01T00:00:02.500Z", end_time: "2025-07-01T00:00:02.900Z" });
  await logs({
    revision_id: "r-1-u2",
    level: "warn",
    query: "LAYER",
    start_time: "2025-07-01T00:00:01.000Z",
    end_time: "2025-07-01T00:00:09.000Z",
  });
  await logs({ kind: "deploy" });
  await logs({ kind: "deploy", order: "desc", query: "ERROR" });
  await logs({ kind: "deploy", revision_id: "r-1-u2", order: "desc" });
  await logs({ deployment_id: "d-0", kind: "deploy" });
  await logs({ deployment_id: "missing" });

  // Purges: a deleted deployment goes, with its revisions, timelines, logs and uploads.
  await step(() =>
    s.uploads.create({
      object_path: "p/0",
      upload_id: "u-0",
      deployment_id: "d-0",
      tenant_id: T,
      created_at: at(),
      expires_at: at(),
      uploaded_at: null,
      size_bytes: null,
      sha256: null,
    }),
  );
  await step(() => s.deployments.purge("d-0"));
  await step(() => s.deployments.getAny("d-0"));
  await step(() => s.revisions.getAny("r-0-1"));
  await step(() => s.revisions.latest("d-0"));
  await step(() => s.revisions.events("r-0-1"));
  await logs({ deployment_id: "d-0", kind: "deploy" });
  await step(() => s.uploads.getById("u-0"));
  await step(() => s.deployments.purge("d-0"));
  await step(() => s.deployments.purge("missing"));
  // A deleted deployment that kept its tracing project: the project stays, pointing nowhere.
  await step(() => s.deployments.markDeleted(T, ["d-3"], false, at()));
  await step(() => s.tracingProjects.getByName(T, "alpha_beta"));
  await step(() => s.deployments.purge("d-3"));
  await step(() => s.tracingProjects.getByName(T, "alpha_beta"));
  await step(() => s.deployments.getAny("d-3"));
  // A live deployment keeps its row (only its revisions and the rest go).
  const live = newDeployment(T, "purge-live", { id: "d-live", revisionId: "r-live-1", at: at() });
  await step(() => s.deployments.create(live.deployment, live.revision, { ...live.project, id: "tp-live" }));
  await step(() => s.logs.append([entry("d-live", "r-live-1", "build", 9, "info", "live")]));
  await step(() => s.deployments.purge("d-live"));
  await step(() => s.deployments.getAny("d-live"));
  await step(() => s.revisions.getAny("r-live-1"));
  await step(() => s.revisions.events("r-live-1"));
  await logs({ deployment_id: "d-live" });
  await step(() => s.tracingProjects.getByName(T, "purge-live"));
  await step(() => s.deployments.assigned(null));
  await logs({});

  // The Auth Service: providers, tokens with their default, flows finished once, connections, and the cascades.
  const provider = (tenantId: string, providerId: string, id: string) => ({
    ...newProvider(tenantId, providerId),
    id,
    created_at: at(),
    updated_at: at(),
  });
  await step(() => s.auth.createProvider(provider(T, "slack", "p-1")));
  await step(() => s.auth.createProvider(provider(T, "slack", "p-2")));
  await step(() =>
    s.auth.createProvider({
      ...provider(T, "microsoft", "p-3"),
      client_secret_ciphertext: null,
      revocation_url: null,
      uses_pkce: false,
      code_challenge_method: null,
      provider_type: null,
      mcp_server_url: "https://mcp.example",
      token_endpoint_auth_method: "none",
      is_dynamic_client: true,
    }),
  );
  await step(() => s.auth.createProvider(provider("tenant-b", "slack", "p-b")));
  await step(() => s.auth.listProviders(T));
  await step(() => s.auth.getProvider("tenant-b", "slack"));
  await step(() => s.auth.updateProvider(T, "slack", { name: "Slack", uses_pkce: false, revocation_url: null }, at()));
  await step(() => s.auth.updateProvider(T, "missing", { name: "x" }, at()));
  const token = (providerId: string, userId: string, id: string, overrides: Partial<OAuthTokenRecord> = {}) => ({
    ...newToken(T, providerId, userId, overrides),
    id,
    created_at: at(),
    updated_at: at(),
  });
  await step(() => s.auth.createToken(token("slack", "u-1", "tok-1", { is_default: true })));
  await step(() => s.auth.createToken(token("slack", "u-1", "tok-2", { is_default: true, scopes: [], expires_at: null })));
  await step(() => s.auth.createToken(token("microsoft", "u-1", "tok-3", { provider_account_label: null })));
  await step(() => s.auth.createToken({ ...token("slack", "u-1", "tok-b"), tenant_id: "tenant-b" }));
  await step(() => s.auth.listTokens(T, "u-1"));
  await step(() => s.auth.listTokens(T, "u-1", "slack"));
  await step(() => s.auth.listProviderTokens(T, "slack"));
  await step(() =>
    s.auth.updateToken(T, "tok-1", { is_default: true, scopes: ["x", "y"], refresh_token_ciphertext: null }, at()),
  );
  await step(() => s.auth.getToken(T, "tok-2"));
  await step(() => s.auth.updateToken("tenant-b", "tok-1", { is_default: false }, at()));
  await step(() => s.auth.getToken("tenant-b", "tok-b"));
  const flow = (providerId: string, id: string, expiresAt: string) => ({
    ...newFlow(T, providerId, "u-1", { agent_id: "a-1" }),
    id,
    state_hash: `hash-${id}`,
    expires_at: expiresAt,
    created_at: at(),
  });
  await step(() => s.auth.createFlow(flow("slack", "f-1", "2025-06-01T02:00:00.000Z")));
  await step(() =>
    s.auth.createFlow({ ...flow("microsoft", "f-2", "2025-06-01T01:00:00.000Z"), code_verifier_ciphertext: null }),
  );
  await step(() => s.auth.getFlow("f-1"));
  await step(() => s.auth.finishFlow("f-1", { status: "completed", token_id: "tok-1" }, at()));
  await step(() => s.auth.finishFlow("f-1", { status: "failed", error: "replayed" }, at()));
  await step(() => s.auth.finishFlow("f-2", { status: "failed", error: "access_denied" }, at()));
  await step(() => s.auth.deleteExpiredFlows("2025-06-01T01:30:00.000Z"));
  await step(() => s.auth.getFlow("f-2"));
  const connection = (id: string, agentId: string, tokenId: string) => ({
    ...newConnection(T, agentId, tokenId),
    id,
    created_at: at(),
  });
  await step(() => s.auth.createConnection(connection("c-1", "a-1", "tok-1")));
  await step(() => s.auth.createConnection(connection("c-2", "a-1", "tok-3")));
  await step(() => s.auth.createConnection(connection("c-3", "a-1", "tok-1")));
  await step(() => s.auth.listConnections(T, "a-1"));
  await step(() => s.auth.deleteToken(T, "tok-3"));
  await step(() => s.auth.listConnections(T, "a-1"));
  await step(() => s.auth.deleteConnection(T, "a-2", "c-1"));
  await step(() => s.auth.deleteProvider(T, "slack"));
  await step(() => s.auth.deleteProvider(T, "slack"));
  await step(() => s.auth.listTokens(T, "u-1"));
  await step(() => s.auth.listConnections(T, "a-1"));
  await step(() => s.auth.getFlow("f-1"));
  await step(() => s.auth.listProviders(T));
  await step(() => s.auth.listProviderTokens("tenant-b", "slack"));
  return log;
}

/** The key order of every record in the log (JSONB reorders the keys of nested JSON values only). */
function keyOrders(log: unknown[]): string[] {
  return log.flatMap((step) => {
    const value = (step as { ok?: unknown }).ok;
    return (Array.isArray(value) ? value : [value]).flatMap((item) =>
      item !== null && typeof item === "object" ? [Object.keys(item).join()] : [],
    );
  });
}

/** PostgreSQL gives the results SQLite gives, for one script of calls to every store. */
export function parityWithSqlite(): void {
  it("gives the same results as the SQLite store for the same calls", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-cp-parity-"));
    const schema = await freshSchema();
    const postgres = await createPostgresStorage(schema.url, { poolSize: 2 });
    const sqlite = createSqliteStorage(dir);
    try {
      const [fromSqlite, fromPostgres] = [await script(sqlite), await script(postgres)];
      assert.equal(fromPostgres.length, fromSqlite.length);
      for (let i = 0; i < fromSqlite.length; i++) assert.deepStrictEqual(fromPostgres[i], fromSqlite[i], `step ${i}`);
      assert.deepEqual(keyOrders(fromPostgres), keyOrders(fromSqlite));
    } finally {
      await sqlite.close();
      await postgres.close();
      rmSync(dir, { recursive: true, force: true });
      await schema.drop();
    }
  });
}
