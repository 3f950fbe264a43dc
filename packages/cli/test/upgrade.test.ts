import assert from "node:assert/strict";
import { createCipheriv, createHash, createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import {
  type Deployment,
  REPO_ROOT,
  type Revision,
  TEST_BACKEND,
  backendEnv,
  newDataDir,
  runBerthExpectingFailure,
  startBerth,
  startControlPlane,
} from "@berth/test-support";

/** The first migration set: the files a data directory or database of the first schema was made with. */
const FIRST_MIGRATIONS = {
  agentServer: ["001_core.sql", "002_runs.sql"],
  controlPlane: ["001_control_plane.sql"],
};
const BACKEND_DIR = TEST_BACKEND === "postgres" ? "postgres" : "sqlite";

function migrationsDir(service: "agent-server" | "control-plane"): string {
  return join(REPO_ROOT, "packages", service, "src", "storage", BACKEND_DIR, "migrations");
}

/** One statement with `?` placeholders, run on the backend under test. */
type Execute = (sql: string, values?: unknown[]) => Promise<void>;

/**
 * A database of the first schema, as the first Berth left it: its migration files applied and recorded in the
 * migrations table of that time (version, name, applied_at), then `write` run on it.
 */
async function oldDatabase(
  sqliteFile: string,
  databaseUrl: string | undefined,
  service: "agent-server" | "control-plane",
  files: string[],
  table: string,
  write: (execute: Execute) => Promise<void>,
): Promise<void> {
  const scripts = files.map((name) => ({ name, sql: readFileSync(join(migrationsDir(service), name), "utf8") }));
  const record = `INSERT INTO ${table} (version, name, applied_at) VALUES (?, ?, ?)`;
  if (TEST_BACKEND === "postgres") {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const execute: Execute = async (sql, values = []) => {
        let n = 0;
        await client.query(
          sql.replace(/\?/g, () => `$${++n}`),
          values,
        );
      };
      await client.query(
        `CREATE TABLE ${table} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`,
      );
      for (const { name, sql } of scripts) {
        await client.query(sql);
        await execute(record, [Number.parseInt(name, 10), name, "2026-11-22T12:00:00.000Z"]);
      }
      await write(execute);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(sqliteFile);
  try {
    db.pragma("journal_mode = WAL");
    const execute: Execute = async (sql, values = []) => void db.prepare(sql).run(...values);
    db.exec(`CREATE TABLE ${table} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    for (const { name, sql } of scripts) {
      db.exec(sql);
      await execute(record, [Number.parseInt(name, 10), name, "2026-11-22T12:00:00.000Z"]);
    }
    await write(execute);
  } finally {
    db.close();
  }
}

/** A migration no Berth has, recorded as a newer Berth would. */
async function recordFutureMigration(sqliteFile: string, databaseUrl: string | undefined, table: string): Promise<void> {
  const sql = `INSERT INTO ${table} (version, name, applied_at, berth_version) VALUES (999, '999_from_the_future.sql', '2030-01-01T00:00:00.000Z', '99.0.0')`;
  if (TEST_BACKEND === "postgres") {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  } else {
    const db = new Database(sqliteFile);
    db.prepare(sql).run();
    db.close();
  }
}

/** The migrations table's rows, to show a refused database was not touched. */
async function migrationRows(sqliteFile: string, databaseUrl: string | undefined, table: string): Promise<unknown[]> {
  const sql = `SELECT version, name, berth_version FROM ${table} ORDER BY version`;
  if (TEST_BACKEND === "postgres") {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return (await client.query(sql).finally(() => client.end())).rows;
  }
  const db = new Database(sqliteFile, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

const iso = (minute: number) => `2026-11-22T12:${String(minute).padStart(2, "0")}:00.000Z`;

test("an agent server's data of the first schema opens with today's Berth, every record read back; a newer one is refused", async () => {
  const dataDir = newDataDir("berth-upgrade-agent-");
  const { DATABASE_URL } = await backendEnv(dataDir);
  const sqliteFile = join(dataDir, "berth.sqlite");
  const assistantId = randomUUID();
  const threadId = randomUUID();
  const runId = randomUUID();
  const messages = [
    { type: "human", content: "written by the first Berth", id: "m1" },
    { type: "ai", content: "and read by today's", id: "m2" },
  ];
  await oldDatabase(
    sqliteFile,
    DATABASE_URL,
    "agent-server",
    FIRST_MIGRATIONS.agentServer,
    "schema_migrations",
    async (execute) => {
      await execute(
        "INSERT INTO assistants (assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at) VALUES (?, 'agent', 'old assistant v2', 'from the first schema', '{}', '{}', ?, 2, ?, ?)",
        [assistantId, JSON.stringify({ era: "first", version: 2 }), iso(1), iso(2)],
      );
      for (const version of [1, 2]) {
        await execute(
          "INSERT INTO assistant_versions (assistant_id, version, graph_id, name, config, context, metadata, created_at) VALUES (?, ?, 'agent', ?, '{}', '{}', ?, ?)",
          [assistantId, version, `old assistant v${version}`, JSON.stringify({ era: "first", version }), iso(version)],
        );
      }
      await execute(
        `INSERT INTO threads (thread_id, status, metadata, config, "values", interrupts, created_at, updated_at) VALUES (?, 'idle', ?, '{}', ?, '{}', ?, ?)`,
        [threadId, JSON.stringify({ era: "first" }), JSON.stringify({ messages }), iso(3), iso(4)],
      );
      await execute(
        "INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at, available_at, attempt, ended_at, output) VALUES (?, ?, ?, 'success', ?, ?, 'reject', ?, ?, ?, 1, ?, ?)",
        [
          runId,
          threadId,
          assistantId,
          JSON.stringify({ era: "first" }),
          JSON.stringify({ input: { messages: [messages[0]] }, stream_mode: ["values"] }),
          iso(3),
          iso(4),
          Date.parse(iso(3)),
          iso(4),
          JSON.stringify({ messages }),
        ],
      );
      await execute("INSERT INTO run_events (run_id, seq, event, data) VALUES (?, 1, 'values', ?)", [
        runId,
        JSON.stringify({ messages }),
      ]);
    },
  );

  const server = await startBerth({ dataDir });
  try {
    const { client } = server;
    const assistant = await client.assistants.get(assistantId);
    assert.equal(assistant.name, "old assistant v2");
    assert.equal(assistant.description, "from the first schema");
    assert.deepEqual(assistant.metadata, { era: "first", version: 2 });
    const versions = await client.assistants.getVersions(assistantId);
    assert.deepEqual(versions.map((version) => version.version).sort(), [1, 2]);
    const thread = await client.threads.get<{ messages: typeof messages }>(threadId);
    assert.deepEqual(thread.metadata, { era: "first" });
    assert.deepEqual(thread.values, { messages });
    assert.ok((await client.threads.search({ metadata: { era: "first" } })).some((found) => found.thread_id === threadId));
    const run = await client.runs.get(threadId, runId);
    assert.equal(run.status, "success");
    assert.deepEqual(run.metadata, { era: "first" });
    assert.deepEqual(
      (await client.runs.list(threadId)).map((listed) => listed.run_id),
      [runId],
    );
    assert.deepEqual(await client.runs.join(threadId, runId), { messages });
    // The upgraded database takes new writes: a run on the old thread.
    const next = await client.runs.wait(threadId, "agent", { input: { messages: [{ type: "human", content: "again" }] } });
    assert.ok(next);
    assert.equal((await client.runs.list(threadId)).length, 2);
  } finally {
    await server.stop();
  }
  const upgraded = await migrationRows(sqliteFile, DATABASE_URL, "schema_migrations");
  assert.ok(upgraded.length > FIRST_MIGRATIONS.agentServer.length, "today's migrations were applied");

  await recordFutureMigration(sqliteFile, DATABASE_URL, "schema_migrations");
  const rowsBefore = await migrationRows(sqliteFile, DATABASE_URL, "schema_migrations");
  const refused = await runBerthExpectingFailure({ dataDir });
  assert.equal(refused.code, 2, refused.output);
  assert.match(refused.output, /written by a newer Berth \(99\.0\.0\)/);
  assert.match(refused.output, /999_from_the_future\.sql/);
  assert.match(refused.output, /Berth \d+\.\d+\.\d+ does not have \(its newest is \d{3}_\w+\.sql\)/);
  assert.match(refused.output, /Nothing was changed/);
  assert.deepEqual(await migrationRows(sqliteFile, DATABASE_URL, "schema_migrations"), rowsBefore);
});

test("a control plane's data of the first schema opens with today's Berth, every record read back; a newer one is refused", async () => {
  const dataDir = newDataDir("berth-upgrade-cp-");
  const env = await backendEnv(dataDir);
  const table = TEST_BACKEND === "postgres" ? controlPlaneMigrationsTable() : "schema_migrations";
  const sqliteFile = join(dataDir, "control-plane.sqlite");
  const tenantId = randomUUID();
  const adminKey = `berth_${randomBytes(24).toString("base64url")}`;
  const deploymentId = randomUUID();
  const revisionIds = [randomUUID(), randomUUID()];
  // The secrets key and a revision's encrypted secrets as the first Berth wrote them (AES-256-GCM, v1.<iv>.<tag>.<data>).
  const secretsKey = randomBytes(32);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, "secrets.key"), `${secretsKey.toString("base64")}\n`, { mode: 0o600 });
  const encrypted = (plaintext: string) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv(
      "aes-256-gcm",
      createHmac("sha256", secretsKey).update("berth secrets encryption").digest(),
      iv,
    );
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv, cipher.getAuthTag(), data]
      .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join(".");
  };
  const secrets = JSON.stringify([{ name: "GREETING", value: "from the first schema" }]);
  await oldDatabase(sqliteFile, env.DATABASE_URL, "control-plane", FIRST_MIGRATIONS.controlPlane, table, async (execute) => {
    await execute("INSERT INTO tenants (id, name, created_at) VALUES (?, 'default', ?)", [tenantId, iso(0)]);
    await execute(
      "INSERT INTO api_keys (id, name, prefix, key_hash, all_tenants, tenant_ids, created_at) VALUES (?, 'admin', ?, ?, ?, ?, ?)",
      [
        randomUUID(),
        adminKey.slice(0, 12),
        createHash("sha256").update(adminKey).digest("hex"),
        TEST_BACKEND === "postgres" ? true : 1,
        JSON.stringify([]),
        iso(0),
      ],
    );
    const sourceConfig = JSON.stringify({});
    const revisionConfig = JSON.stringify({ graph_config_path: "langgraph.json" });
    await execute(
      "INSERT INTO deployments (id, tenant_id, name, source, source_config, secret_references, status, latest_revision_id, created_at, updated_at) VALUES (?, ?, 'first-era', 'internal_source', ?, '[]', 'AWAITING_DATABASE', ?, ?, ?)",
      [deploymentId, tenantId, sourceConfig, revisionIds[1], iso(1), iso(2)],
    );
    for (const [index, revisionId] of revisionIds.entries()) {
      await execute(
        "INSERT INTO revisions (id, deployment_id, tenant_id, number, status, status_message, source, source_revision_config, source_config, secret_references, secrets_ciphertext, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '', 'internal_source', ?, ?, '[]', ?, ?, ?)",
        [
          revisionId,
          deploymentId,
          tenantId,
          index + 1,
          index === 0 ? "SKIPPED" : "QUEUED",
          revisionConfig,
          sourceConfig,
          encrypted(secrets),
          iso(1 + index),
          iso(1 + index),
        ],
      );
    }
  });

  const cp = await startControlPlane({ dataDir, adminKey, defaultTenantId: tenantId });
  try {
    const deployment = await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`);
    assert.equal(deployment.status, 200, `${JSON.stringify(deployment.body)}\n${cp.output()}`);
    assert.equal(deployment.body.name, "first-era");
    assert.equal(deployment.body.latest_revision_id, revisionIds[1]);
    assert.deepEqual(
      deployment.body.secrets.map((secret) => secret.name),
      ["GREETING"],
      "the secrets decrypt with the key",
    );
    const listed = await cp.admin.get<{ resources: Deployment[] }>("/v2/deployments");
    assert.deepEqual(
      listed.body.resources.map((found) => found.id),
      [deploymentId],
    );
    const revisions = await cp.admin.get<{ resources: Revision[] }>(`/v2/deployments/${deploymentId}/revisions`);
    assert.equal(revisions.status, 200, JSON.stringify(revisions.body));
    assert.deepEqual(revisions.body.resources.map((revision) => revision.id).sort(), [...revisionIds].sort());
    for (const revisionId of revisionIds) {
      const revision = await cp.admin.get<Revision>(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
      assert.equal(revision.status, 200, JSON.stringify(revision.body));
    }
    const info = await fetch(`${cp.url}/info`);
    assert.equal(info.status, 200);
  } finally {
    await cp.stop();
  }

  await recordFutureMigration(sqliteFile, env.DATABASE_URL, table);
  const rowsBefore = await migrationRows(sqliteFile, env.DATABASE_URL, table);
  await assert.rejects(startControlPlane({ dataDir, adminKey, defaultTenantId: tenantId }), (error: Error) => {
    assert.match(error.message, /written by a newer Berth \(99\.0\.0\)/);
    assert.match(error.message, /999_from_the_future\.sql/);
    assert.match(error.message, /Nothing was changed/);
    return true;
  });
  assert.deepEqual(await migrationRows(sqliteFile, env.DATABASE_URL, table), rowsBefore);
});

/** The control plane's migrations table on PostgreSQL (it shares databases with agent servers). */
function controlPlaneMigrationsTable(): string {
  const source = readFileSync(join(REPO_ROOT, "packages", "control-plane", "src", "storage", "postgres", "index.ts"), "utf8");
  return /migrationsTable:\s*"([a-z_]+)"/.exec(source)?.[1] ?? "schema_migrations";
}
