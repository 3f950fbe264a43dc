// Runs in the SQLite pass only: its subject is the CLI,
// where the control plane's database plays no part.
// `berth secrets`, `berth deploy --env-file` and revisions named by a prefix of their id, against a control plane
// with its embedded listener: the fixture agent answers with its GREETING secret, so each change is seen served.
import assert from "node:assert/strict";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { CONTROL_PLANE_FIXTURES, type ControlPlane, newDataDir, startControlPlane, uniqueName } from "@berth/test-support";
import { askAgent, type Berth, berthAgainst } from "./helpers/remote-cli.js";

interface Revisions {
  resources: { id: string; status: string }[];
}

describe("berth secrets, deploy --env-file, and revision id prefixes", () => {
  let cp: ControlPlane;
  let berth: Berth;
  const name = uniqueName("cli-secrets");
  let url: string;
  /** Every value set in these tests: none may ever be printed. */
  const values = ["from the env file", "line one", "bonjour", "BEGIN TEST KEY"];
  const assertNoValue = (...outputs: string[]) => {
    for (const output of outputs) for (const value of values) assert.ok(!output.includes(value), `printed "${value}"`);
  };

  before(async () => {
    cp = await startControlPlane({ listener: true });
    berth = berthAgainst(cp);
  });
  after(() => cp?.stop());

  test("deploy --env-file sends the file's variables as secrets, without uploading it or printing a value", async () => {
    const dir = join(newDataDir("berth-cli-project-"), name);
    cpSync(join(CONTROL_PLANE_FIXTURES, "deploy-app"), dir, { recursive: true });
    const envFile = join(newDataDir("berth-cli-env-"), "production.env");
    writeFileSync(envFile, '# the agent\'s greeting\nGREETING="from the env file"\nexport MULTI="line one\nline two"\n');
    const run = await berth(["deploy", dir, "--env-file", envFile]);
    assert.equal(run.code, 0, run.stderr);
    url = run.stdout.trim();
    assert.match(run.stderr, new RegExp(`secrets from ${envFile}: GREETING, MULTI`));
    assertNoValue(run.stdout, run.stderr);
    assert.equal(await askAgent(cp, url, "hi"), "from the env file: hi");
  });

  test("secrets list prints the names only", async () => {
    const list = await berth(["secrets", "list", name]);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout, "GREETING\nMULTI\n");
    const json = await berth(["secrets", "list", name, "--json"]);
    assert.deepEqual(JSON.parse(json.stdout), ["GREETING", "MULTI"]);
  });

  test("secrets set reads the value piped on stdin, follows the new revision and prints the URL", async () => {
    const run = await berth(["secrets", "set", name, "GREETING"], { input: "bonjour\n" });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), url);
    assert.match(run.stderr, new RegExp(`set GREETING on ${name}: revision [0-9a-f-]{36}`));
    assert.match(run.stderr, /: DEPLOYED \(/);
    assertNoValue(run.stdout, run.stderr);
    assert.equal(await askAgent(cp, url, "hi"), "bonjour: hi", "the piped line less its newline");
  });

  test("secrets set --from-file takes a file as it is; --no-follow prints the revision; unset removes one", async () => {
    const keyFile = join(newDataDir("berth-cli-key-"), "key.pem");
    writeFileSync(keyFile, "-----BEGIN TEST KEY-----\nAAAA\n-----END TEST KEY-----\n");
    const set = await berth(["secrets", "set", name, "SIGNING_KEY", "--from-file", keyFile, "--no-follow", "--json"]);
    assert.equal(set.code, 0, set.stderr);
    const revision = JSON.parse(set.stdout) as { id: string; deployment_id: string };
    assert.match(revision.id, /^[0-9a-f-]{36}$/);
    assertNoValue(set.stdout, set.stderr);

    const unset = await berth(["secrets", "unset", name, "MULTI"]);
    assert.equal(unset.code, 0, unset.stderr);
    assert.equal(unset.stdout.trim(), url);
    const list = await berth(["secrets", "list", name]);
    assert.deepEqual(list.stdout.trim().split("\n").sort(), ["GREETING", "SIGNING_KEY"]);
    assert.equal(await askAgent(cp, url, "hi"), "bonjour: hi", "the other secrets kept their values");
  });

  test("secrets refuses what cannot work: an unknown name, an empty value, a reserved name, an unknown deployment", async () => {
    const unknown = await berth(["secrets", "unset", name, "NOPE"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, new RegExp(`${name} has no secret NOPE`));
    const empty = await berth(["secrets", "set", name, "EMPTY"], { input: "" });
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /empty value for EMPTY/);
    const reserved = await berth(["secrets", "set", name, "PORT"], { input: "9999\n" });
    assert.equal(reserved.code, 1);
    assert.match(reserved.stderr, /"PORT" is reserved/);
    const nowhere = await berth(["secrets", "list", uniqueName("no-such")]);
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.stderr, /no deployment named/);
    const usage = await berth(["secrets", "set", name]);
    assert.equal(usage.code, 2);
  });

  test("revisions get and logs take any unique prefix of a revision's id; an unknown one is refused", async () => {
    const page = JSON.parse((await berth(["revisions", "list", name, "--json"])).stdout) as Revisions;
    const deployed = page.resources.find((r) => r.status === "DEPLOYED")!;
    const prefix = deployed.id.slice(0, 8);
    const got = await berth(["revisions", "get", name, prefix, "--json"]);
    assert.equal(got.code, 0, got.stderr);
    assert.equal((JSON.parse(got.stdout) as { id: string }).id, deployed.id);
    const logs = await berth(["logs", name, "--build", "--revision", prefix]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /^\[[^\]]+\] \[\w+\] /m);

    let unknown = "0123456789";
    while (page.resources.some((r) => r.id.startsWith(unknown))) unknown = unknown.replace(/^./, (c) => `${(+c + 1) % 10}`);
    const missing = await berth(["revisions", "get", name, unknown]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, new RegExp(`${name} has no revision whose id starts with "${unknown}"`));
    const notAnId = await berth(["revisions", "redeploy", name, "latest"]);
    assert.equal(notAnId.code, 1);
    assert.match(notAnId.stderr, /"latest" is not a revision id or the start of one/);
  });

  test("an ambiguous prefix is refused, listing the revisions it starts", async () => {
    // A deployment waiting for its upload: each secrets change makes a revision, and nothing builds.
    const waiting = uniqueName("cli-waiting");
    const created = await cp.admin.post<{ id: string }>("/v2/deployments", {
      name: waiting,
      source: "internal_source",
      source_config: {},
      source_revision_config: { graph_config_path: "langgraph.json" },
      secrets: [],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const revisionIds = async () =>
      (await cp.admin.get<Revisions>(`/v2/deployments/${created.body.id}/revisions?limit=100`)).body.resources.map((r) => r.id);
    // With 17 revisions two ids share a first character (16 hex digits); usually far fewer do.
    let shared: string | undefined;
    for (let count = 1; shared === undefined; count++) {
      const ids = await revisionIds();
      shared = ids.map((id) => id[0]!).find((first, index, all) => all.indexOf(first) !== index);
      if (shared === undefined) {
        const patched = await cp.admin.patch(`/v2/deployments/${created.body.id}`, {
          secrets: [{ name: "N", value: `${count}` }],
        });
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
      }
    }
    const run = await berth(["revisions", "get", waiting, shared]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, new RegExp(`"${shared}" is the start of \\d+ revision ids of ${waiting}; give more characters`));
    for (const id of (await revisionIds()).filter((id) => id.startsWith(shared!))) assert.ok(run.stderr.includes(id), id);
    // secrets set on it says the first upload brings the secret, and does not wait for a build.
    const set = await berth(["secrets", "set", waiting, "GREETING"], { input: "bonjour\n" });
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stderr, /has no source yet: its first deploy brings the secrets/);
  });

  test("without --tenant a key works in the only workspace it reaches; with several, the refusal lists them", async () => {
    const noTenant = { env: { BERTH_TENANT_ID: "" } };
    const only = await berth(["secrets", "list", name], noTenant);
    assert.equal(only.code, 0, only.stderr);
    assert.equal(only.stdout, "GREETING\nSIGNING_KEY\n");
    const second = await cp.createTenant(uniqueName("second"));
    const several = await berth(["secrets", "list", name], noTenant);
    assert.equal(several.code, 1);
    assert.match(several.stderr, /requires workspace specification/);
    assert.ok(several.stderr.includes(`${cp.defaultTenantId} "`), several.stderr);
    assert.ok(several.stderr.includes(`${second.id} "${second.name}"`), several.stderr);
    const chosen = await berth(["secrets", "list", name, "--tenant", cp.defaultTenantId], noTenant);
    assert.equal(chosen.code, 0, chosen.stderr);
  });
});
