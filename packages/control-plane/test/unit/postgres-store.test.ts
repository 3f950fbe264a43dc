// The PostgreSQL storage of the control plane: the semantics of
// storage/types.ts, the SQLite store's behaviour (a parity script runs against
// both), and what only a shared database adds: concurrent creates and updates
// from several pools. Needs DATABASE_URL; every run uses a fresh schema.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { applyPostgresMigrations, ConflictError } from "@berth/service-kit";
import pg from "pg";
import { IN_PROGRESS_REVISION_STATUSES } from "../../src/model/statuses.js";
import { createPostgresStorage } from "../../src/storage/postgres/index.js";
import { createSqliteStorage } from "../../src/storage/sqlite/index.js";
import type {
  ApiKeyRecord,
  ControlPlaneStorage,
  DeploymentChange,
  DeploymentRecord,
  ListenerRecord,
  LogFilter,
  LogKind,
  NewRevision,
  RevisionRecord,
  TracingProjectRecord,
  UploadRecord,
} from "../../src/storage/types.js";

const DATABASE_URL = process.env.DATABASE_URL;
const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../src/storage/postgres/migrations");

function skipWithoutPostgres(what: string): string | false {
  if (DATABASE_URL) return false;
  console.warn(`\n*** SKIPPED: ${what} (DATABASE_URL is not set, e.g. postgres://postgres@127.0.0.1:5432/postgres). ***\n`);
  return "DATABASE_URL is not set";
}

async function admin(sql: string, url = DATABASE_URL): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** `url` with every connection's search_path set to `schema`. */
function urlWithSchema(url: string, schema: string): string {
  const withSchema = new URL(url);
  withSchema.searchParams.set("options", `-c search_path=${schema}`);
  return withSchema.toString();
}

const BASE = Date.parse("2025-01-01T00:00:00.000Z");
let clock = 0;
/** A new timestamp, later than every earlier one (ISO with milliseconds, as the application writes them). */
const tick = () => new Date(BASE + ++clock * 1000).toISOString();

const RESOURCE_SPEC = {
  min_scale: 1,
  max_scale: 1,
  cpu_request: "1",
  memory_request: "1Gi",
  cpu_limit: null,
  memory_limit: null,
};

interface NewDeployment {
  deployment: DeploymentRecord;
  revision: NewRevision;
  project: TracingProjectRecord;
  /** What get() returns after create. */
  stored: DeploymentRecord;
}

function newDeployment(
  tenantId: string,
  name: string,
  options: {
    id?: string;
    revisionId?: string;
    at?: string;
    deployment?: Partial<DeploymentRecord>;
    sourceConfig?: Record<string, unknown>;
  } = {},
): NewDeployment {
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
function nextRevision(latest: RevisionRecord, id: string = randomUUID(), at = tick()): NewRevision {
  const { number: _n, deployment_id: _d, tenant_id: _t, ...rest } = latest;
  return { ...rest, id, status: "QUEUED", status_message: "", created_at: at, updated_at: at };
}

function newListener(tenantId: string, computeId: string, id: string = randomUUID(), isDefault = false): ListenerRecord {
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

function newApiKey(hash: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
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

const isConflict = (message: string) => (err: unknown) => {
  assert.ok(err instanceof ConflictError, `expected a ConflictError, got ${String(err)}`);
  assert.equal(err.message, message);
  return true;
};

describe("PostgreSQL control-plane storage", { skip: skipWithoutPostgres("PostgreSQL control-plane storage tests") }, () => {
  const schema = `berth_cp_test_${randomBytes(6).toString("hex")}`;
  let url: string;
  /** Two pools over one schema, as two control-plane processes. */
  let a: ControlPlaneStorage;
  let b: ControlPlaneStorage;

  before(async () => {
    await admin(`CREATE SCHEMA ${schema}`);
    url = urlWithSchema(DATABASE_URL!, schema);
    [a, b] = await Promise.all([createPostgresStorage(url, { poolSize: 6 }), createPostgresStorage(url, { poolSize: 6 })]);
  });

  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  /** A new workspace, so tests share no listings. */
  async function tenant(): Promise<string> {
    const id = `tenant-${randomUUID()}`;
    await a.tenants.create({ id, name: id, created_at: tick() });
    return id;
  }

  async function created(tenantId: string, name: string, options: Parameters<typeof newDeployment>[2] = {}) {
    const made = newDeployment(tenantId, name, options);
    await a.deployments.create(made.deployment, made.revision, made.project);
    return made;
  }

  it("records its migrations in control_plane_migrations, and closes twice", async () => {
    const { rows } = await admin("SELECT version, name FROM control_plane_migrations ORDER BY version", url);
    assert.deepEqual(rows, [
      { version: 1, name: "001_control_plane.sql" },
      { version: 2, name: "002_lifecycle.sql" },
      { version: 3, name: "003_tracing.sql" },
    ]);
    const extra = await createPostgresStorage(url, { poolSize: 1 });
    await extra.close();
    await extra.close();
  });

  it("creates deployments with their first revision and tracing project, and gets them back as given", async () => {
    const t = await tenant();
    const made = newDeployment(t, "first", {
      deployment: {
        secret_references: [{ name: "OPENAI_API_KEY", secret_name: "llm", secret_key: "openai" }],
        active_revision_id: null,
      },
    });
    await a.deployments.create(made.deployment, made.revision, made.project);
    const stored = { ...made.stored };
    assert.deepEqual(await a.deployments.get(t, made.deployment.id), stored);
    assert.deepEqual(await b.deployments.get(t, made.deployment.id), stored);
    assert.equal(await a.deployments.get("other-tenant", made.deployment.id), undefined);
    assert.equal(await a.deployments.get(t, "missing"), undefined);

    const revision: RevisionRecord = { ...made.revision, deployment_id: made.deployment.id, tenant_id: t, number: 1 };
    assert.deepEqual(await a.revisions.get(t, made.deployment.id, made.revision.id), revision);
    assert.deepEqual(await a.revisions.latest(made.deployment.id), revision);
    assert.deepEqual(await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0 }), [revision]);
    assert.equal(await a.revisions.get("other-tenant", made.deployment.id, made.revision.id), undefined);

    // null secret_references stay null (not the JSON value null, not a missing key).
    const plain = await created(t, "plain");
    const got = await a.deployments.get(t, plain.deployment.id);
    assert.equal(got?.secret_references, null);
    assert.equal((await a.revisions.latest(plain.deployment.id))?.secret_references, null);

    assert.deepEqual(await a.tracingProjects.getByName(t, "first"), made.project);
    assert.equal(await a.tracingProjects.getByName(t, "nope"), undefined);
  });

  it("keeps an existing tracing project of the name, pointing it at the new deployment", async () => {
    const t = await tenant();
    const first = await created(t, "traced");
    await a.deployments.markDeleted(t, [first.deployment.id], false, tick());
    const second = newDeployment(t, "traced");
    await a.deployments.create(second.deployment, second.revision, second.project);
    assert.deepEqual(await a.tracingProjects.getByName(t, "traced"), { ...first.project, deployment_id: second.deployment.id });
  });

  it("lists live deployments newest first, with every filter", async () => {
    const t = await tenant();
    const other = await tenant();
    const same = tick();
    const alpha = await created(t, "Alpha_One", { sourceConfig: { deployment_type: "prod" } });
    const beta = await created(t, "beta%two");
    const gamma = await created(t, "gammaXone", { id: "z-gamma", at: same });
    const delta = await created(t, "delta", { id: "a-delta", at: same, deployment: { status: "READY" } });
    const gone = await created(t, "gone");
    await a.deployments.markDeleted(t, [gone.deployment.id], false, tick());
    await created(other, "Alpha_One");

    const names = async (filter: Partial<Parameters<ControlPlaneStorage["deployments"]["list"]>[1]>) =>
      (await b.deployments.list(t, { limit: 50, offset: 0, ...filter })).map((d) => d.name);

    // created_at DESC, then id DESC (z-gamma before a-delta at the same time).
    assert.deepEqual(await names({}), ["beta%two", "Alpha_One", "gammaXone", "delta"]);
    assert.deepEqual(await names({ limit: 2, offset: 1 }), ["Alpha_One", "gammaXone"]);
    assert.deepEqual(await names({ offset: 10 }), []);
    // A case-insensitive substring: % and _ are themselves.
    assert.deepEqual(await names({ name_contains: "ALPHA" }), ["Alpha_One"]);
    assert.deepEqual(await names({ name_contains: "_" }), ["Alpha_One"]);
    assert.deepEqual(await names({ name_contains: "a_o" }), ["Alpha_One"]);
    assert.deepEqual(await names({ name_contains: "%" }), ["beta%two"]);
    assert.deepEqual(await names({ name_contains: "ONE" }), ["Alpha_One", "gammaXone"]);
    assert.deepEqual(await names({ name_contains: "" }), ["beta%two", "Alpha_One", "gammaXone", "delta"]);
    assert.deepEqual(await names({ statuses: ["READY"] }), ["delta"]);
    assert.deepEqual(await names({ statuses: ["READY", "AWAITING_DATABASE"] }), ["beta%two", "Alpha_One", "gammaXone", "delta"]);
    assert.deepEqual(await names({ statuses: ["AWAITING_DELETE"] }), []);
    assert.deepEqual(await names({ statuses: [] }), ["beta%two", "Alpha_One", "gammaXone", "delta"]);
    assert.deepEqual(await names({ deployment_ids: [delta.deployment.id, gone.deployment.id, alpha.deployment.id] }), [
      "Alpha_One",
      "delta",
    ]);
    assert.deepEqual(await names({ deployment_type: "prod" }), ["Alpha_One"]);
    assert.deepEqual(await names({ deployment_type: "dev", name_contains: "a", statuses: ["AWAITING_DATABASE"] }), [
      "beta%two",
      "gammaXone",
    ]);
    const listed = await a.deployments.list(t, { limit: 1, offset: 0 });
    assert.deepEqual(listed, [beta.stored]);
    assert.equal(gamma.stored.id, "z-gamma");
  });

  it("refuses a second live deployment of a name, also from 5 concurrent creates", async () => {
    const t = await tenant();
    const first = await created(t, "dup");
    const again = newDeployment(t, "dup");
    await assert.rejects(
      a.deployments.create(again.deployment, again.revision, again.project),
      isConflict('A deployment named "dup" already exists'),
    );
    // Nothing of the refused create remains.
    assert.equal(await a.revisions.latest(again.deployment.id), undefined);
    assert.deepEqual(await a.tracingProjects.getByName(t, "dup"), first.project);
    // Another workspace may use the name.
    await created(await tenant(), "dup");

    const attempts = Array.from({ length: 5 }, () => newDeployment(t, "race"));
    const results = await Promise.allSettled(
      attempts.map((m, i) => (i % 2 ? b : a).deployments.create(m.deployment, m.revision, m.project)),
    );
    const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [attempts[i]] : []));
    assert.equal(won.length, 1, JSON.stringify(results));
    for (const r of results) {
      if (r.status === "rejected") isConflict('A deployment named "race" already exists')(r.reason);
    }
    const live = await a.deployments.list(t, { limit: 10, offset: 0, name_contains: "race" });
    assert.deepEqual(live, [won[0].stored]);
    assert.equal((await a.tracingProjects.getByName(t, "race"))?.deployment_id, won[0].deployment.id);
    for (const loser of attempts.filter((m) => m !== won[0]))
      assert.equal(await a.revisions.latest(loser.deployment.id), undefined);
  });

  it("numbers the revisions of 10 concurrent updates 2..11, each update seeing the previous ones", async () => {
    const t = await tenant();
    const made = await created(t, "busy", { sourceConfig: { counter: 0 } });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? b : a).deployments.update(t, made.deployment.id, (deployment, latest) => ({
          source_config: { ...deployment.source_config, counter: (deployment.source_config.counter as number) + 1 },
          secret_references: deployment.secret_references,
          updated_at: tick(),
          revision: nextRevision(latest),
        })),
      ),
    );
    const numbers = results.map((r) => r!.revision!.number).sort((x, y) => x - y);
    assert.deepEqual(numbers, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const final = await a.deployments.get(t, made.deployment.id);
    assert.equal(final?.source_config.counter, 10); // no update lost
    const revisions = await a.revisions.list(t, made.deployment.id, { limit: 100, offset: 0 });
    assert.deepEqual(
      revisions.map((r) => r.number),
      [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
    );
    assert.equal(final?.latest_revision_id, revisions[0].id);
    // Each update's result is the record as stored then, its revision as stored.
    for (const result of results) {
      assert.equal(result!.deployment.latest_revision_id, result!.revision!.id);
      assert.equal(result!.revision!.deployment_id, made.deployment.id);
      assert.equal(result!.revision!.tenant_id, t);
    }
    // Only the newest is still in progress; each earlier one was superseded by its successor.
    assert.equal(revisions[0].status, "QUEUED");
    for (let i = 1; i < revisions.length; i++) {
      assert.equal(revisions[i].status, "SKIPPED");
      assert.equal(revisions[i].status_message, `Superseded by revision ${revisions[i - 1].number} (${revisions[i - 1].id})`);
      assert.equal(revisions[i].updated_at, revisions[i - 1].created_at);
    }
    assert.deepEqual(
      await a.revisions
        .list(t, made.deployment.id, { limit: 2, offset: 1, statuses: ["SKIPPED"] })
        .then((rs) => rs.map((r) => r.number)),
      [9, 8],
    );
    assert.deepEqual(await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0, statuses: ["QUEUED", "DEPLOYED"] }), [
      revisions[0],
    ]);
  });

  it("updates without a revision, and supersedes only revisions in progress", async () => {
    const t = await tenant();
    const made = await created(t, "sup");
    const at = tick();
    const plain = await a.deployments.update(t, made.deployment.id, (deployment, latest) => {
      assert.deepEqual(deployment, made.stored);
      assert.equal(latest.id, made.revision.id);
      assert.equal(latest.number, 1);
      return {
        source_config: { ...deployment.source_config, custom_url: "https://x" },
        secret_references: [{ name: "N", secret_name: "n", secret_key: "one" }],
        updated_at: at,
      };
    });
    assert.deepEqual(plain, {
      deployment: {
        ...made.stored,
        source_config: { ...made.stored.source_config, custom_url: "https://x" },
        secret_references: [{ name: "N", secret_name: "n", secret_key: "one" }],
        updated_at: at,
      },
      revision: undefined,
    });
    assert.deepEqual(await a.deployments.get(t, made.deployment.id), plain!.deployment);

    // Revision 1 DEPLOYED (final) stays; revision 2 in progress is superseded by 3.
    await a.revisions.transition(made.revision.id, ["QUEUED"], "DEPLOYED", "Deployed", tick());
    const change = (deployment: DeploymentRecord, latest: RevisionRecord): DeploymentChange => ({
      source_config: deployment.source_config,
      secret_references: deployment.secret_references,
      updated_at: tick(),
      revision: nextRevision(latest),
    });
    const second = (await a.deployments.update(t, made.deployment.id, change))!.revision!;
    await a.revisions.transition(second.id, ["QUEUED"], "BUILDING", "Building", tick());
    const third = (await b.deployments.update(t, made.deployment.id, change))!.revision!;
    assert.equal(third.number, 3);
    const [r3, r2, r1] = await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0 });
    assert.deepEqual(r3, third);
    assert.deepEqual(
      [r2.status, r2.status_message, r2.updated_at],
      ["SKIPPED", `Superseded by revision 3 (${third.id})`, third.created_at],
    );
    assert.deepEqual([r1.status, r1.status_message], ["DEPLOYED", "Deployed"]);

    assert.equal(await a.deployments.update(t, "missing", () => assert.fail("plan of a missing deployment")), undefined);
    assert.equal(
      await a.deployments.update("other", made.deployment.id, () => assert.fail("plan of another workspace")),
      undefined,
    );
  });

  it("changes nothing when plan throws, and rethrows its error", async () => {
    const t = await tenant();
    const made = await created(t, "careful");
    const before = await a.deployments.get(t, made.deployment.id);
    const revisionsBefore = await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0 });
    const failure = new Error("invalid change");
    await assert.rejects(
      a.deployments.update(t, made.deployment.id, () => {
        throw failure;
      }),
      (err) => err === failure,
    );
    assert.deepEqual(await a.deployments.get(t, made.deployment.id), before);
    assert.deepEqual(await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0 }), revisionsBefore);
    // The row lock was released: the next update goes through.
    const next = await a.deployments.update(t, made.deployment.id, (d, latest) => ({
      source_config: d.source_config,
      secret_references: null,
      updated_at: tick(),
      revision: nextRevision(latest),
    }));
    assert.equal(next?.revision?.number, 2);
  });

  it("marks deployments deleted, freeing their names", async () => {
    const t = await tenant();
    const keep = await created(t, "keep-project");
    const drop = await created(t, "drop-project");
    const at = tick();
    assert.deepEqual(
      await a.deployments.markDeleted(t, [drop.deployment.id, "missing", keep.deployment.id, drop.deployment.id], false, at),
      [drop.deployment.id, keep.deployment.id],
    );
    assert.deepEqual(await a.deployments.markDeleted(t, [drop.deployment.id], true, tick()), []);
    assert.deepEqual(await a.deployments.markDeleted(t, [], true, tick()), []);
    assert.equal(await a.deployments.get(t, drop.deployment.id), undefined);
    assert.equal(await a.revisions.get(t, drop.deployment.id, drop.revision.id), undefined);
    assert.deepEqual(await a.revisions.list(t, drop.deployment.id, { limit: 10, offset: 0 }), []);
    assert.equal((await a.revisions.latest(drop.deployment.id))?.id, drop.revision.id); // deleted or not
    assert.equal(await a.deployments.update(t, drop.deployment.id, () => assert.fail("plan of a deleted deployment")), undefined);
    const { rows } = await admin(
      `SELECT status, deleted_at, updated_at FROM ${schema}.deployments WHERE id = '${drop.deployment.id}'`,
    );
    assert.deepEqual(
      rows.map((r) => [r.status, r.deleted_at.toISOString(), r.updated_at.toISOString()]),
      [["AWAITING_DELETE", at, at]],
    );
    assert.ok(await a.tracingProjects.getByName(t, "keep-project"));

    // Another workspace cannot delete them; with deleteTracingProjects the project goes.
    const third = await created(t, "third");
    assert.deepEqual(await a.deployments.markDeleted("other", [third.deployment.id], true, tick()), []);
    assert.deepEqual(await a.deployments.markDeleted(t, [third.deployment.id], true, tick()), [third.deployment.id]);
    assert.equal(await a.tracingProjects.getByName(t, "third"), undefined);

    // The name is free again.
    const reborn = await created(t, "drop-project");
    assert.deepEqual(await a.deployments.get(t, reborn.deployment.id), reborn.stored);
  });

  it("refuses duplicate listener compute ids and deleting listeners in use", async () => {
    const t = await tenant();
    const first = newListener(t, "cluster-1");
    await a.listeners.create(first);
    assert.deepEqual(await a.listeners.get(t, first.id), first);
    assert.equal(await a.listeners.get("other", first.id), undefined);
    await assert.rejects(
      a.listeners.create(newListener(t, "cluster-1")),
      isConflict('A listener with compute_id "cluster-1" already exists'),
    );
    const racers = await Promise.allSettled([b, a, b].map((s) => s.listeners.create(newListener(t, "cluster-2"))));
    assert.equal(racers.filter((r) => r.status === "fulfilled").length, 1);
    const other = await tenant();
    await a.listeners.create(newListener(other, "cluster-1"));

    const listed = await a.listeners.list(t, 10, 0);
    assert.deepEqual(
      listed.map((l) => l.compute_id),
      ["cluster-2", "cluster-1"],
    );
    assert.deepEqual(await a.listeners.list(t, 1, 1), [first]);

    const at = tick();
    const updated = await a.listeners.update(t, first.id, {
      compute_config: { cluster_namespaces: null },
      version: "1.2.3",
      default: false,
      updated_at: at,
    });
    assert.deepEqual(updated, { ...first, compute_config: { cluster_namespaces: null }, version: "1.2.3", updated_at: at });
    assert.deepEqual(await a.listeners.get(t, first.id), updated);
    assert.equal(
      await a.listeners.update("other", first.id, {
        compute_config: { cluster_namespaces: [] },
        version: null,
        default: false,
        updated_at: at,
      }),
      undefined,
    );

    const user = await created(t, "on-listener", { sourceConfig: { listener_id: first.id } });
    await assert.rejects(
      a.listeners.delete(t, first.id),
      isConflict(`Listener ${first.id} is used by a deployment; delete its deployments first`),
    );
    assert.equal(await a.listeners.delete("other", first.id), false);
    await a.deployments.markDeleted(t, [user.deployment.id], false, tick());
    assert.equal(await a.listeners.delete(t, first.id), true);
    assert.equal(await a.listeners.delete(t, first.id), false);
    assert.equal(await a.listeners.get(t, first.id), undefined);
    const { rows } = await admin(`SELECT listener_id FROM ${schema}.deployments WHERE id = '${user.deployment.id}'`);
    assert.deepEqual(rows, [{ listener_id: null }]);
  });

  it("moves revisions between statuses only from the given ones", async () => {
    const t = await tenant();
    const made = await created(t, "moving");
    const id = made.revision.id;
    const stored = await a.revisions.latest(made.deployment.id);
    assert.equal(await a.revisions.transition(id, ["BUILDING", "DEPLOYING"], "DEPLOYED", "no", tick()), undefined);
    assert.equal(await a.revisions.transition(id, [], "DEPLOYED", "no", tick()), undefined);
    assert.equal(await a.revisions.transition("missing", ["QUEUED"], "DEPLOYED", "no", tick()), undefined);
    assert.deepEqual(await a.revisions.latest(made.deployment.id), stored);
    const at = tick();
    const moved = await b.revisions.transition(id, ["QUEUED", "CREATING"], "BUILDING", "Building image", at);
    assert.deepEqual(moved, { ...stored, status: "BUILDING", status_message: "Building image", updated_at: at });
    assert.deepEqual(await a.revisions.get(t, made.deployment.id, id), moved);
    // Concurrent transitions from the same status: exactly one wins, and only its step is in the timeline.
    const results = await Promise.all(
      [a, b, a, b].map((s, i) => s.revisions.transition(id, ["BUILDING"], "DEPLOYING", `go ${i}`, tick())),
    );
    const winners = results.filter((r) => r !== undefined);
    assert.equal(winners.length, 1);
    const events = await b.revisions.events(id);
    assert.deepEqual(
      events.map(({ revision_id, deployment_id, at, status, message }) => ({ revision_id, deployment_id, at, status, message })),
      [
        { revision_id: id, deployment_id: made.deployment.id, at: stored!.created_at, status: "QUEUED", message: "" },
        { revision_id: id, deployment_id: made.deployment.id, at, status: "BUILDING", message: "Building image" },
        {
          revision_id: id,
          deployment_id: made.deployment.id,
          at: winners[0]!.updated_at,
          status: "DEPLOYING",
          message: winners[0]!.status_message,
        },
      ],
    );
    assert.ok(events.every((event) => typeof event.id === "number"));
    assert.ok(events[0].id < events[1].id && events[1].id < events[2].id);
  });

  it("keeps one default listener per workspace, also under concurrent changes from two pools", async () => {
    const t = await tenant();
    const other = await tenant();
    const listeners = Array.from({ length: 6 }, (_, i) => newListener(t, `c-${i}`));
    await Promise.all(listeners.map((l) => a.listeners.create(l)));
    await a.listeners.create(newListener(other, "c-0", randomUUID(), true));
    assert.equal(await a.listeners.defaultOf(t), undefined);
    const change = () => ({ compute_config: { cluster_namespaces: null }, version: null, default: true, updated_at: tick() });
    const updated = await Promise.all(listeners.map((l, i) => (i % 2 ? b : a).listeners.update(t, l.id, change())));
    assert.ok(updated.every((l) => l?.default === true)); // each was the default, for a moment
    const defaults = async (tenantId: string) =>
      (await admin(`SELECT id FROM ${schema}.listeners WHERE tenant_id = '${tenantId}' AND is_default`)).rows.map((r) => r.id);
    const [only] = await defaults(t);
    assert.deepEqual(await defaults(t), [only]);
    assert.equal((await b.listeners.defaultOf(t))?.id, only);
    // New defaults created concurrently: again one.
    const fresh = Array.from({ length: 4 }, (_, i) => newListener(t, `n-${i}`, randomUUID(), true));
    await Promise.all(fresh.map((l, i) => (i % 2 ? b : a).listeners.create(l)));
    const [newest] = await defaults(t);
    assert.deepEqual(await defaults(t), [newest]);
    assert.ok(fresh.some((l) => l.id === newest));
    // The other workspace's default never moved.
    assert.equal((await defaults(other)).length, 1);
    // Unmarking leaves none.
    await a.listeners.update(t, newest, {
      compute_config: { cluster_namespaces: null },
      version: null,
      default: false,
      updated_at: tick(),
    });
    assert.equal(await a.listeners.defaultOf(t), undefined);
  });

  it("reports, assigns and purges deployments", async () => {
    const t = await tenant();
    const listener = newListener(t, "cluster");
    await a.listeners.create(listener);
    const onListener = await created(t, "on-listener", { sourceConfig: { listener_id: listener.id } });
    const embedded = await created(t, "embedded");
    assert.deepEqual(await b.deployments.assigned(listener.id), [onListener.stored]);
    assert.ok((await b.deployments.assigned(null)).some((d) => d.id === embedded.deployment.id));
    assert.ok(!(await b.deployments.assigned(null)).some((d) => d.id === onListener.deployment.id));

    const at = tick();
    await b.deployments.report(
      onListener.deployment.id,
      { status: "READY", custom_url: "https://x.example", image_version: "v1" },
      at,
    );
    assert.deepEqual(await a.deployments.get(t, onListener.deployment.id), {
      ...onListener.stored,
      status: "READY",
      image_version: "v1",
      source_config: { ...onListener.stored.source_config, custom_url: "https://x.example" },
      updated_at: at,
    });

    // Everything of the deployment goes; other deployments keep theirs.
    const id = onListener.deployment.id;
    await a.logs.append([
      { deployment_id: id, revision_id: onListener.revision.id, kind: "build", timestamp: tick(), level: "info", message: "one" },
      {
        deployment_id: embedded.deployment.id,
        revision_id: null,
        kind: "deploy",
        timestamp: tick(),
        level: "info",
        message: "two",
      },
    ]);
    await a.revisions.transition(onListener.revision.id, ["QUEUED"], "BUILDING", "b", tick());
    await a.uploads.create({
      object_path: `uploads/${id}/src.tar.gz`,
      upload_id: randomUUID(),
      deployment_id: id,
      tenant_id: t,
      created_at: tick(),
      expires_at: tick(),
      uploaded_at: null,
      size_bytes: null,
      sha256: null,
    });
    const counts = async (deploymentId: string) =>
      (
        await admin(
          `SELECT (SELECT count(*) FROM ${schema}.revision_events WHERE deployment_id = '${deploymentId}')::int AS events,
             (SELECT count(*) FROM ${schema}.deployment_logs WHERE deployment_id = '${deploymentId}')::int AS logs,
             (SELECT count(*) FROM ${schema}.uploads WHERE deployment_id = '${deploymentId}')::int AS uploads,
             (SELECT count(*) FROM ${schema}.revisions WHERE deployment_id = '${deploymentId}')::int AS revisions,
             (SELECT count(*) FROM ${schema}.deployments WHERE id = '${deploymentId}')::int AS deployments`,
        )
      ).rows[0];
    assert.deepEqual(await counts(id), { events: 2, logs: 1, uploads: 1, revisions: 1, deployments: 1 });
    await a.deployments.markDeleted(t, [id], false, tick());
    await b.deployments.report(id, { status: "READY" }, tick());
    assert.equal((await a.deployments.getAny(id))?.status, "AWAITING_DELETE");
    assert.deepEqual(await b.deployments.assigned(listener.id), [await a.deployments.getAny(id)]);
    await Promise.all([a.deployments.purge(id), b.deployments.purge(id)]);
    assert.deepEqual(await counts(id), { events: 0, logs: 0, uploads: 0, revisions: 0, deployments: 0 });
    assert.deepEqual(await counts(embedded.deployment.id), { events: 1, logs: 1, uploads: 0, revisions: 1, deployments: 1 });
    assert.equal((await a.tracingProjects.getByName(t, "on-listener"))?.deployment_id, null);
    assert.deepEqual(await b.deployments.assigned(listener.id), []);
    assert.equal(await a.listeners.delete(t, listener.id), true);
  });

  it("numbers a batch of log lines in the order given", async () => {
    const t = await tenant();
    const made = await created(t, "chatty");
    const entries = Array.from({ length: 1500 }, (_, i) => ({
      deployment_id: made.deployment.id,
      revision_id: i % 3 ? made.revision.id : null,
      kind: "deploy" as const,
      timestamp: new Date(BASE - i * 1000).toISOString(), // later lines may carry earlier times
      level: "info",
      message: `line ${i}`,
    }));
    await a.logs.append(entries);
    const page = (order: "asc" | "desc", offset: number) =>
      b.logs.query({ deployment_id: made.deployment.id, kind: "deploy", order, limit: 1000, offset });
    const asc = [...(await page("asc", 0)), ...(await page("asc", 1000))];
    assert.deepEqual(
      asc.map(({ id: _id, ...entry }) => entry),
      entries,
    );
    assert.ok(asc.every((line, i) => i === 0 || line.id > asc[i - 1].id));
    assert.deepEqual((await page("desc", 0)).map((line) => line.message).slice(0, 2), ["line 1499", "line 1498"]);
  });

  it("upgrades a database made by the first migration, keeping its rows", async () => {
    const oldSchema = `berth_cp_upgrade_${randomBytes(6).toString("hex")}`;
    await admin(`CREATE SCHEMA ${oldSchema}`);
    const oldDir = mkdtempSync(join(tmpdir(), "berth-cp-migrations-"));
    const oldUrl = urlWithSchema(DATABASE_URL!, oldSchema);
    try {
      copyFileSync(join(MIGRATIONS_DIR, "001_control_plane.sql"), join(oldDir, "001_control_plane.sql"));
      const pool = new pg.Pool({ connectionString: oldUrl, max: 1 });
      try {
        await applyPostgresMigrations(pool, oldDir, "control_plane_migrations");
        const at = "2025-01-01T00:00:00.000Z";
        await pool.query(`INSERT INTO tenants VALUES ('t', 't', '${at}')`);
        await pool.query(
          `INSERT INTO listeners VALUES ('l', 't', 'cluster', 'c', '{"cluster_namespaces":null}', NULL, '${at}', '${at}')`,
        );
        await pool.query(
          `INSERT INTO deployments VALUES ('d', 't', 'old', 'external_image', '{}', NULL, 'READY', 'r', 'r', NULL, 'l', '${at}', '${at}', NULL)`,
        );
        await pool.query(
          `INSERT INTO revisions VALUES ('r', 'd', 't', 1, 'DEPLOYED', '', 'external_image', '{}', '{}', NULL, 'c', '${at}', '${at}')`,
        );
      } finally {
        await pool.end();
      }
      const upgraded = await createPostgresStorage(oldUrl, { poolSize: 1 });
      try {
        assert.equal((await upgraded.listeners.get("t", "l"))?.default, false);
        assert.equal((await upgraded.deployments.get("t", "d"))?.listener_id, "l");
        assert.equal((await upgraded.revisions.getAny("r"))?.artifact_revision_id, null);
        assert.deepEqual(await upgraded.revisions.events("r"), []); // no timeline before the upgrade
        assert.deepEqual(await upgraded.deployments.assigned("l").then((ds) => ds.map((d) => d.id)), ["d"]);
      } finally {
        await upgraded.close();
      }
    } finally {
      rmSync(oldDir, { recursive: true, force: true });
      await admin(`DROP SCHEMA ${oldSchema} CASCADE`);
    }
  });

  it("stores uploads", async () => {
    const t = await tenant();
    const made = await created(t, "uploading");
    const upload: UploadRecord = {
      object_path: `uploads/${t}/${made.deployment.id}/src.tar.gz`,
      upload_id: randomUUID(),
      deployment_id: made.deployment.id,
      tenant_id: t,
      created_at: tick(),
      expires_at: tick(),
      uploaded_at: null,
      size_bytes: null,
      sha256: null,
    };
    await a.uploads.create(upload);
    assert.deepEqual(await a.uploads.getById(upload.upload_id), upload);
    assert.deepEqual(await a.uploads.getByPath(upload.object_path), upload);
    assert.equal(await a.uploads.getById("missing"), undefined);
    assert.equal(await a.uploads.getByPath("missing"), undefined);
    const at = tick();
    await a.uploads.markUploaded(upload.upload_id, 5_000_000_000, "ab".repeat(32), at);
    const done = { ...upload, uploaded_at: at, size_bytes: 5_000_000_000, sha256: "ab".repeat(32) };
    assert.deepEqual(await b.uploads.getById(upload.upload_id), done);
    assert.deepEqual(await b.uploads.getByPath(upload.object_path), done);
  });

  it("stores api keys, tenants and integrations", async () => {
    const hash = randomBytes(32).toString("hex");
    const adminKey = newApiKey(hash, { all_tenants: true, name: "admin" });
    await a.apiKeys.create(adminKey);
    await a.apiKeys.create(newApiKey(hash, { name: "same hash" })); // left as it is
    assert.deepEqual(await a.apiKeys.findByHash(hash), adminKey);
    assert.equal(await a.apiKeys.findByHash("nope"), undefined);
    const scoped = newApiKey(randomBytes(32).toString("hex"), { tenant_ids: ["t1", "t2"] });
    await b.apiKeys.create(scoped);
    const keys = await a.apiKeys.list();
    assert.deepEqual(
      keys.filter((k) => k.id === adminKey.id || k.id === scoped.id),
      [adminKey, scoped],
    );
    const at = tick();
    const revoked = await a.apiKeys.revoke(scoped.id, at);
    assert.deepEqual(revoked, { ...scoped, revoked_at: at });
    assert.deepEqual(await a.apiKeys.revoke(scoped.id, tick()), revoked); // once
    assert.equal(await a.apiKeys.revoke("missing", tick()), undefined);

    const t = await tenant();
    const tenantRecord = await a.tenants.get(t);
    assert.equal(tenantRecord?.id, t);
    assert.equal(await a.tenants.get("missing"), undefined);
    assert.ok((await a.tenants.list()).some((x) => x.id === t));

    const integration = {
      id: randomUUID(),
      tenant_id: t,
      name: "org",
      provider: "repo_host" as const,
      installation_id: 3_000_000_000,
      repos: [{ id: 1, name: "agent", owner: "org", url: "https://example.com/org/agent", default_branch: "main" }],
      created_at: tick(),
    };
    await a.integrations.create(integration);
    const second = { ...integration, id: randomUUID(), name: "org2", repos: [], created_at: tick() };
    await a.integrations.create(second);
    assert.deepEqual(await a.integrations.get(t, integration.id), integration);
    assert.equal(await a.integrations.get("other", integration.id), undefined);
    assert.deepEqual(await b.integrations.list(t), [integration, second]);
  });

  it("gives the same results as the SQLite store for the same calls", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-cp-parity-"));
    const paritySchema = `berth_cp_parity_${randomBytes(6).toString("hex")}`;
    await admin(`CREATE SCHEMA ${paritySchema}`);
    const postgres = await createPostgresStorage(urlWithSchema(DATABASE_URL!, paritySchema), { poolSize: 2 });
    const sqlite = createSqliteStorage(dir);
    try {
      const [fromSqlite, fromPostgres] = [await script(sqlite), await script(postgres)];
      assert.equal(fromPostgres.length, fromSqlite.length);
      for (let i = 0; i < fromSqlite.length; i++) assert.deepStrictEqual(fromPostgres[i], fromSqlite[i], `step ${i}`);
    } finally {
      await sqlite.close();
      await postgres.close();
      rmSync(dir, { recursive: true, force: true });
      await admin(`DROP SCHEMA ${paritySchema} CASCADE`);
    }
  });
});

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
    }),
  );
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
  return log;
}
