// Runs in the SQLite pass only: its subject is the CLI,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type CommandRun,
  CONTROL_PLANE_FIXTURES,
  type ControlPlane,
  deployTarball,
  newDataDir,
  packFixture,
  REPO_ROOT,
  revisionLeaves,
  runBerth,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";

interface RunOptions {
  /** Connected through BERTH_URL, BERTH_API_KEY and BERTH_TENANT_ID (default); false: no connection setting at all. */
  connected?: boolean;
  /** Written to stdin, then closed (default: nothing). */
  input?: string;
}

interface Revisions {
  resources: { id: string; status: string }[];
}

/** A copy of the deploy-app fixture in a folder named `name`, with `extra` files written over it. */
function project(name: string, extra: Record<string, string> = {}): string {
  const dir = join(newDataDir("berth-cli-project-"), name);
  cpSync(join(CONTROL_PLANE_FIXTURES, "deploy-app"), dir, { recursive: true });
  for (const [path, content] of Object.entries(extra)) writeFileSync(join(dir, path), content);
  return dir;
}

describe("berth deploy, deployments, revisions and logs against a control plane", () => {
  let cp: ControlPlane;
  /** The real `berth` binary, run in an empty folder with a home of its own (`berth login` writes there). */
  let berth: (args: string[], options?: RunOptions) => Promise<CommandRun>;
  const name = uniqueName("cli");
  let dir: string;
  let url: string;
  let configFile: string;

  before(async () => {
    cp = await startControlPlane({ listener: true });
    const cwd = newDataDir("berth-cli-cwd-");
    const home = newDataDir("berth-cli-home-");
    configFile = join(home, "xdg", "berth", "config.json");
    berth = async (args, { connected = true, input } = {}) => {
      const env: Record<string, string | undefined> = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "xdg") };
      for (const variable of ["BERTH_URL", "BERTH_API_KEY", "BERTH_TENANT_ID"]) delete env[variable];
      if (connected) Object.assign(env, { BERTH_URL: cp.url, BERTH_API_KEY: cp.adminKey, BERTH_TENANT_ID: cp.defaultTenantId });
      return runBerth(args, { cwd, env, input: input ?? "" });
    };
    // A .env that .gitignore leaves out is not refused: it is never packed.
    dir = project(name, { ".gitignore": ".env\n", ".env": "GREETING=local\n" });
  });
  after(() => cp?.stop());

  test("deploy packs, uploads, follows the build and prints the URL, which serves", async () => {
    const run = await berth(["deploy", dir]);
    assert.equal(run.code, 0, run.stderr);
    url = run.stdout.trim();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/d\/[0-9a-f-]{36}$/);
    assert.match(run.stderr, new RegExp(`created deployment ${name}`));
    assert.match(run.stderr, /graphs loaded: agent, slow/, "the build log, live");
    assert.match(run.stderr, /: DEPLOYED \(/);
    assert.equal((await fetch(`${url}/ok`)).status, 200);
    // A project of a few KB says so, not "0.0 MB".
    assert.match(run.stderr, /^uploaded \d+\.\d KB$/m, run.stderr);
  });

  test("revisions list leaves out the first revision, which waited for the upload; --all shows it saying so", async () => {
    const page = JSON.parse((await berth(["revisions", "list", name, "--json"])).stdout) as {
      resources: { id: string; deployment_id: string }[];
    };
    const [second, first] = page.resources;
    assert.equal(page.resources.length, 2);
    const waited = (
      await cp.admin.get<{ status: string; status_message: string }>(
        `/v2/deployments/${first!.deployment_id}/revisions/${first!.id}`,
      )
    ).body;
    assert.equal(waited.status, "SKIPPED");
    assert.equal(waited.status_message, `No source: waited for an upload, which came with revision 2 (${second!.id})`);

    const list = await berth(["revisions", "list", name]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^${second!.id} +DEPLOYED `, "m"));
    assert.ok(!list.stdout.includes(first!.id), list.stdout);
    assert.match(list.stderr, /1 revision\(s\) that never had source .* --all shows them/);
    const all = await berth(["revisions", "list", name, "--all"]);
    assert.equal(all.code, 0, all.stderr);
    assert.match(
      all.stdout,
      new RegExp(`^${first!.id} +SKIPPED +\\S+ +No source: waited for an upload, which came with revision 2`, "m"),
    );
  });

  test("deploy --json of the same folder updates that deployment and prints JSON only", async () => {
    const run = await berth(["deploy", dir, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { name: string; status: string; url: string; revision_id: string };
    assert.equal(result.name, name);
    assert.equal(result.status, "DEPLOYED");
    assert.equal(result.url, url, "the same deployment, at its stable URL");
    const revisions = await berth(["revisions", "list", name, "--json"]);
    assert.equal(revisions.code, 0, revisions.stderr);
    const page = JSON.parse(revisions.stdout) as { resources: { id: string; status: string }[] };
    assert.equal(page.resources[0]?.id, result.revision_id);
    assert.equal(page.resources.filter((r) => r.status === "DEPLOYED").length, 2);
  });

  test("deployments list --json lists it; get prints an aligned table", async () => {
    const run = await berth(["deployments", "list", "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const page = JSON.parse(run.stdout) as { resources: { name: string; source_config: { custom_url: string } }[] };
    const listed = page.resources.find((d) => d.name === name);
    assert.ok(listed, run.stdout);
    assert.equal(listed.source_config.custom_url, url);
    const got = await berth(["deployments", "get", name]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /^status +READY$/m);
    assert.match(got.stdout, new RegExp(`^url +${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
  });

  test("logs --build prints a revision's build lines (default the latest)", async () => {
    const latest = await berth(["logs", name, "--build"]);
    assert.equal(latest.code, 0, latest.stderr);
    assert.match(latest.stdout, /Reusing the existing build/, "the re-deploy of unchanged sources reuses the first build");
    const revisions = JSON.parse((await berth(["revisions", "list", name, "--json"])).stdout) as Revisions;
    // Revision 1 waited for the upload (SKIPPED); the first build is the oldest DEPLOYED one.
    const first = revisions.resources.filter((r) => r.status === "DEPLOYED").at(-1)?.id ?? "";
    const run = await berth(["logs", name, "--build", "--revision", first]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split("\n");
    assert.ok(lines.length > 1, run.stdout);
    for (const line of lines) assert.match(line, /^\[[^\]]+\] \[\w+\] /);
    const json = await berth(["logs", name, "--build", "--revision", first, "--json"]);
    assert.equal((JSON.parse(json.stdout) as unknown[]).length, lines.length);
  });

  test("a build that fails exits 1 with the reason once, after the build log on stderr", async () => {
    const broken = project(uniqueName("cli-broken"), { "agent.ts": 'throw new Error("the model key is missing");\n' });
    const run = await berth(["deploy", broken]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, "");
    assert.match(
      run.stderr,
      /==> Checking that every graph loads\n(.*\n)*.*ended BUILD_FAILED: .*agent.*the model key is missing/,
    );
    assert.equal(run.stderr.split("the model key is missing").length, 2, run.stderr);
  });

  test("a .env file, a private key or a link is refused before anything is uploaded, naming the file", async () => {
    const refusedName = uniqueName("cli-refused");
    const refused = project(refusedName, {
      ".env": "OPENAI_API_KEY=sk-live\n",
      ".env.example": "OPENAI_API_KEY=\n",
      "deploy.key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----\n",
      id_rsa: "key",
      "id_rsa.pub": "ssh-rsa AAAA",
    });
    symlinkSync("agent.ts", join(refused, "link.ts"));
    const run = await berth(["deploy", refused]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /refusing to upload 4 file\(s\)/);
    assert.match(run.stderr, /^ {2}link\.ts: a symbolic link/m);
    assert.match(run.stderr, /^ {2}\.env: /m);
    assert.match(run.stderr, /^ {2}deploy\.key: a private key/m);
    assert.match(run.stderr, /^ {2}id_rsa: a private key/m);
    assert.doesNotMatch(run.stderr, /\.env\.example|id_rsa\.pub/);
    const listed = await berth(["deployments", "list", "--name-contains", refusedName, "--json"]);
    assert.deepEqual((JSON.parse(listed.stdout) as { resources: unknown[] }).resources, []);
  });

  test("--help of every command and subcommand prints its usage on stdout; --version the package's", async () => {
    const commands = [
      ["deploy"],
      ["deployments"],
      ["deployments", "list"],
      ["deployments", "get"],
      ["deployments", "delete"],
      ["revisions"],
      ["revisions", "list"],
      ["revisions", "get"],
      ["revisions", "redeploy"],
      ["revisions", "interrupt"],
      ["logs"],
      ["login"],
      ["logout"],
      ["check"],
      ["listener"],
      ["base-image"],
      ["control-plane"],
      ["control-plane", "tenants", "create"],
      ["control-plane", "keys", "create"],
      ["control-plane", "integrations", "add"],
    ];
    for (const command of commands) {
      const run = await berth([...command, command.length > 1 ? "-h" : "--help"]);
      assert.equal(run.code, 0, `${command.join(" ")}: ${run.stderr}`);
      assert.match(run.stdout, new RegExp(`^Usage: berth ${command[0]}`), command.join(" "));
    }
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "packages", "cli", "package.json"), "utf8")) as {
      version: string;
    };
    for (const flag of ["--version", "-v"]) {
      const run = await berth([flag], { connected: false });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `${version}\n`);
    }
  });

  test("login refuses a bad key and saves nothing; a good one piped on stdin serves later commands without flags", async () => {
    const refused = await berth(["login", "--url", cp.url, "--api-key", "not-a-key"], { connected: false });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused the key \(40[13] .+\); nothing was saved/);
    assert.equal(existsSync(configFile), false);

    const login = await berth(["login", "--url", cp.url, "--tenant", cp.defaultTenantId, "--json"], {
      connected: false,
      input: `${cp.adminKey}\n`,
    });
    assert.equal(login.code, 0, login.stderr);
    assert.deepEqual(JSON.parse(login.stdout), { url: cp.url, tenant_id: cp.defaultTenantId, config_file: configFile });
    assert.equal(statSync(configFile).mode & 0o777, 0o600);
    assert.equal(statSync(join(configFile, "..")).mode & 0o777, 0o700);

    const listed = await berth(["deployments", "list", "--json"], { connected: false });
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok((JSON.parse(listed.stdout) as { resources: { name: string }[] }).resources.some((d) => d.name === name));
    const table = await berth(["deployments", "list"], { connected: false });
    assert.match(table.stdout, /^NAME +ID +STATUS +URL +UPDATED$/m);

    const logout = await berth(["logout"], { connected: false });
    assert.equal(logout.code, 0, logout.stderr);
    assert.equal(existsSync(configFile), false);
  });

  test("revisions redeploy of an earlier revision deploys its build again and prints the URL", async () => {
    const before = JSON.parse((await berth(["revisions", "list", name, "--json"])).stdout) as Revisions;
    const earliest = before.resources.filter((r) => r.status === "DEPLOYED").at(-1)?.id ?? "";
    const run = await berth(["revisions", "redeploy", name, earliest]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), url);
    assert.match(run.stderr, new RegExp(`redeploying revision ${earliest} of ${name} as revision [0-9a-f-]{36}`));
    const list = await berth(["revisions", "list", name]);
    assert.match(list.stdout, /^ID +STATUS +CREATED +MESSAGE$/m);
    const newest = list.stdout.split("\n")[1] ?? "";
    assert.match(newest, /^[0-9a-f-]{36} +DEPLOYED /, list.stdout);
    assert.ok(!before.resources.some((r) => newest.startsWith(r.id)), "a new revision");

    const skipped = before.resources.find((r) => r.status === "SKIPPED")?.id ?? "";
    const refused = await berth(["revisions", "redeploy", name, skipped]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /400 Only a revision that was deployed can be redeployed/);
  });

  test("revisions interrupt stops a revision still building; a final one is refused", async () => {
    const slowName = uniqueName("cli-slow");
    // A build that would take a minute: it is still BUILDING when interrupted.
    const { deployment, revisionId } = await deployTarball(cp.admin, slowName, packFixture("deploy-app"), {
      sourceConfig: { build_command: "sleep 60" },
    });
    await revisionLeaves(cp.admin, deployment.id, revisionId, "QUEUED");
    assert.equal((await revisionLeaves(cp.admin, deployment.id, revisionId, "AWAITING_BUILD")).status, "BUILDING");
    const run = await berth(["revisions", "interrupt", slowName, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const revision = JSON.parse(run.stdout) as { id: string; status: string };
    assert.deepEqual([revision.id, revision.status], [revisionId, "INTERRUPTED"]);
    const again = await berth(["revisions", "interrupt", slowName]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /409 .*INTERRUPTED/);
  });

  test("deployments delete removes it", async () => {
    const run = await berth(["deployments", "delete", name]);
    assert.equal(run.code, 0, run.stderr);
    const got = await berth(["deployments", "get", name]);
    assert.equal(got.code, 1);
    assert.match(got.stderr, /no deployment named/);
  });
});
