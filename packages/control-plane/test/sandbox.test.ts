// Runs in the SQLite pass only: its subject is the local sandbox,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Api, api, type ControlPlane, type Deployment, newDataDir, startControlPlane } from "@berth/test-support";
import { deployTarball, finalRevision, logsOf, packFixture } from "@berth/test-support";

// A hostile project (fixtures/sandbox-probe) deployed in two workspaces: its
// install script and its graph try to read what is not theirs and report
// what they could. The listener sandboxes only as root: so do the tests here
// and in CI (where bubblewrap is installed), and they expect the sandbox on.

interface Attempt {
  ok: boolean;
  value?: unknown;
  code?: string;
}

interface Report {
  uid: number;
  gid: number;
  cwd: string;
  data_dir: string;
  env: Record<string, string>;
  keys: Record<string, Attempt>;
  reads: Record<string, Attempt>;
  lists: Record<string, Attempt>;
  proc1_environ: Attempt;
  writes: { artifact: Attempt; data: Attempt; tmp: Attempt };
  build_probe: Attempt;
}

interface BuildReport {
  uid: number;
  keys: Record<string, Attempt>;
  root: Attempt;
  env: string[];
}

interface Tenant {
  client: Api;
  key: string;
  deployment: Deployment;
  url: string;
  report: Report;
}

/** What the root of a sandbox may hold: the system, Berth's install, the deployment's own directories. */
const ROOT_ENTRIES = new Set([
  "bin",
  "sbin",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "usr",
  "etc",
  "dev",
  "proc",
  "tmp",
  "opt",
  "app",
  "data",
]);
/** Every variable a deployment's server may see, besides its own secrets. */
const SERVER_VARIABLES = new Set([
  "PWD", // bwrap's, of its --chdir
  "PATH",
  "HOME",
  "TMPDIR",
  "NODE_ENV",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "BERTH_SQLITE_SHARED",
  "BERTH_DEPLOYMENT_ID",
  "BERTH_REVISION_ID",
  "BERTH_API_KEY", // the deployment's own key, which only the router sends
  "LANGSMITH_TRACING",
  "LANGSMITH_ENDPOINT",
  "LANGSMITH_API_KEY",
  "LANGSMITH_PROJECT",
  "BERTH_AUTH_SERVICE_URL", // the Auth Service, with the deployment's key valid for its users' tokens only
  "BERTH_AUTH_SERVICE_KEY",
  "BERTH_WEBHOOK_SECRET", // the deployment's own, which signs its run webhooks
]);
/** Set in the control plane's environment only: a build or server that sees it inherited the control plane's. */
const SENTINEL = "BERTH_TEST_CONTROL_PLANE_ONLY";

describe("the local compute is a sandbox", { skip: process.getuid?.() !== 0 && "the listener sandboxes only as root" }, () => {
  let cp: ControlPlane;
  let dataDir: string;
  let adminKey: string;
  const tenants: Tenant[] = [];

  before(async () => {
    // A data directory an older version left readable by everyone.
    dataDir = newDataDir();
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, "admin.key"), "stale\n", { mode: 0o644 });
    writeFileSync(join(dataDir, "secrets.key"), `${randomBytes(32).toString("base64")}\n`, { mode: 0o644 });
    chmodSync(join(dataDir, "admin.key"), 0o644);
    chmodSync(join(dataDir, "secrets.key"), 0o644);
    // No BERTH_ADMIN_API_KEY: the control plane writes its admin key to admin.key, which the probes then go after.
    cp = await startControlPlane({ listener: true, dataDir, env: { BERTH_ADMIN_API_KEY: undefined, [SENTINEL]: "sentinel" } });
    adminKey = readFileSync(join(dataDir, "admin.key"), "utf8").trim();
    const workspaceB = await cp.createTenant("b");
    const keyB = await cp.createKey({ tenants: [workspaceB.id] });
    const clients = [
      { client: api(cp.url, adminKey, cp.defaultTenantId), key: adminKey, name: "probe-a" },
      { client: api(cp.url, keyB.key, workspaceB.id), key: keyB.key, name: "probe-b" },
    ];
    const tarball = packFixture("sandbox-probe");
    for (const { client, key, name } of clients) {
      const { deployment, revisionId } = await deployTarball(client, name, tarball, {
        secrets: [{ name: "PROBE_SECRET", value: name }],
      });
      const revision = await finalRevision(client, deployment.id, revisionId);
      if (revision.status !== "DEPLOYED") {
        const log = await logsOf(client, deployment.id, revisionId, "build");
        assert.fail(`${name}: ${revision.status} ${revision.status_message}\n${log.map((line) => line.message).join("\n")}`);
      }
      const current = (await client.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
      tenants.push({
        client,
        key,
        deployment: current,
        url: current.source_config.custom_url!,
        report: undefined as unknown as Report,
      });
    }
    const [a, b] = tenants as [Tenant, Tenant];
    a.report = await probe(a, b);
    b.report = await probe(b, a);
  });
  after(() => cp?.stop());

  /** What `self` finds, trying also the control plane's files and `other`'s by their absolute paths. */
  async function probe(self: Tenant, other: Tenant): Promise<Report> {
    const response = await fetch(`${self.url}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": self.key },
      body: JSON.stringify({
        assistant_id: "probe",
        input: { request: { reads: secretPaths(other), lists: [dataDir, artifactsOf(other)] } },
      }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { report: Report }).report;
  }

  const artifactsOf = (tenant: Tenant) => join(dataDir, "listener", "artifacts", tenant.deployment.id);
  const databaseOf = (tenant: Tenant) => join(dataDir, "listener", "deployments", tenant.deployment.id, "data", "berth.sqlite");
  const secretPaths = (other: Tenant) => [
    join(dataDir, "admin.key"),
    join(dataDir, "secrets.key"),
    join(dataDir, "control-plane.sqlite"),
    databaseOf(other),
  ];
  const failed = (attempts: Record<string, Attempt>) =>
    Object.entries(attempts)
      .filter(([, attempt]) => attempt.ok)
      .map(([path, attempt]) => `${path}: ${JSON.stringify(attempt.value)}`);

  test("the data directory is 0700 and its key files 0600, also those an older version left looser", () => {
    assert.equal(statSync(dataDir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dataDir, "admin.key")).mode & 0o777, 0o600);
    assert.equal(statSync(join(dataDir, "secrets.key")).mode & 0o777, 0o600);
    assert.notEqual(adminKey, "stale", "the first start wrote its admin key");
    assert.equal(statSync(join(dataDir, "listener")).mode & 0o777, 0o700);
  });

  test("each deployment runs as a user of its own, who alone owns its build and its data", () => {
    const [a, b] = tenants as [Tenant, Tenant];
    for (const tenant of tenants) {
      const { report, deployment } = tenant;
      assert.notEqual(report.uid, 0);
      assert.equal(report.gid, report.uid);
      const data = statSync(join(dataDir, "listener", "deployments", deployment.id, "data"));
      assert.deepEqual([data.uid, data.mode & 0o777], [report.uid, 0o700]);
      const builds = statSync(artifactsOf(tenant));
      assert.deepEqual([builds.uid, builds.mode & 0o777], [0, 0o700]);
      for (const build of readdirSync(artifactsOf(tenant))) {
        const stat = statSync(join(artifactsOf(tenant), build));
        assert.deepEqual([stat.uid, stat.mode & 0o777], [report.uid, 0o700]);
      }
    }
    assert.notEqual(a.report.uid, b.report.uid);
  });

  test("the same tarball in two workspaces: a build for each deployment, an install cache for each workspace", () => {
    const listenerDir = join(dataDir, "listener");
    assert.deepEqual(readdirSync(join(listenerDir, "artifacts")).sort(), tenants.map(({ deployment }) => deployment.id).sort());
    const caches = readdirSync(join(listenerDir, "install-cache"));
    assert.equal(caches.length, 2, caches.join(" "));
    for (const cache of caches) {
      const stat = statSync(join(listenerDir, "install-cache", cache));
      assert.deepEqual([stat.uid, stat.mode & 0o777], [0, 0o700]);
    }
  });

  test("no deployment reads the control plane's keys or database, by relative or absolute paths", () => {
    for (const { report } of tenants) {
      assert.deepEqual(failed(report.keys), []);
      const [admin, secrets, database] = Object.keys(report.reads);
      for (const path of [admin!, secrets!, database!]) {
        assert.equal(report.reads[path]!.ok, false, `${path} was read`);
      }
      assert.equal(
        report.lists[dataDir]!.ok,
        false,
        `the control plane's data directory was listed: ${JSON.stringify(report.lists[dataDir])}`,
      );
    }
    // The attempts are meaningful: those files are there, outside the sandbox.
    assert.ok(existsSync(join(dataDir, "admin.key")) && existsSync(join(dataDir, "secrets.key")));
  });

  test("no deployment sees another workspace's deployment: neither its database nor its build", () => {
    const [a, b] = tenants as [Tenant, Tenant];
    for (const [self, other] of [
      [a, b],
      [b, a],
    ] as const) {
      assert.ok(existsSync(databaseOf(other)) && existsSync(artifactsOf(other)));
      assert.equal(self.report.reads[databaseOf(other)]!.ok, false);
      assert.equal(self.report.lists[artifactsOf(other)]!.ok, false);
    }
  });

  test("a deployment sees the system, Berth and its own directories: /, the parent of its cwd, and only its own processes", () => {
    for (const { report } of tenants) {
      for (const dir of ["/", ".."]) {
        const listing = report.lists[dir]!;
        assert.ok(listing.ok, JSON.stringify(listing));
        const unexpected = (listing.value as string[]).filter((name) => !ROOT_ENTRIES.has(name));
        assert.deepEqual(unexpected, [], `${dir} shows ${JSON.stringify(listing.value)}`);
      }
      const processes = (report.lists["/proc"]!.value as string[]).filter((name) => /^\d+$/.test(name));
      assert.ok(processes.length > 0 && processes.length < 10, `a pid namespace of its own: ${processes.join(" ")}`);
    }
  });

  test("a deployment's environment is its secrets and the platform's variables, nothing of the control plane's", () => {
    for (const { report, deployment } of tenants) {
      const names = Object.keys(report.env).filter((name) => !SERVER_VARIABLES.has(name));
      assert.deepEqual(names, ["PROBE_SECRET"]);
      assert.equal(report.env.PROBE_SECRET, deployment.name);
      const pid1 = report.proc1_environ;
      assert.ok(!pid1.ok || !String(pid1.value).includes(SENTINEL), "pid 1 of the sandbox shows the control plane's environment");
    }
  });

  test("a deployment writes in its data directory and its /tmp, not in its build", () => {
    for (const { report } of tenants) {
      assert.equal(report.writes.data.ok, true, JSON.stringify(report.writes.data));
      assert.equal(report.writes.tmp.ok, true, JSON.stringify(report.writes.tmp));
      assert.equal(report.writes.artifact.ok, false);
      assert.equal(report.writes.artifact.code, "EROFS");
    }
  });

  test("an install script runs sandboxed too, as the deployment's user: no key file, no control-plane variable", async () => {
    for (const { report, client, deployment } of tenants) {
      assert.ok(report.build_probe.ok, `the postinstall script wrote its report: ${JSON.stringify(report.build_probe)}`);
      const build = JSON.parse(String(report.build_probe.value)) as BuildReport;
      assert.equal(build.uid, report.uid);
      assert.deepEqual(failed(build.keys), []);
      assert.ok(build.root.ok);
      assert.deepEqual(
        (build.root.value as string[]).filter((name) => !ROOT_ENTRIES.has(name)),
        [],
      );
      for (const name of [
        SENTINEL,
        "BERTH_ADMIN_API_KEY",
        "BERTH_DEFAULT_TENANT_ID",
        "BERTH_ROUTER_PORT",
        "DATABASE_URL",
        "REDIS_URL",
        "PROBE_SECRET",
      ]) {
        assert.ok(!build.env.includes(name), `the install script saw ${name}`);
      }
      const log = await logsOf(client, deployment.id, deployment.latest_revision_id!, "build");
      assert.ok(
        log.some((line) => line.message === `build probe: uid ${report.uid}, read 0 key files`),
        log.map((line) => line.message).join("\n"),
      );
    }
  });
});
