import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BERTH_BIN, type ControlPlane, newDataDir, startControlPlane, uniqueName } from "@berth/test-support";
import { FIXTURES } from "./helpers/deploy.js";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A copy of the deploy-app fixture in a folder named `name`, with `extra` files written over it. */
function project(name: string, extra: Record<string, string> = {}): string {
  const dir = join(newDataDir("berth-cli-project-"), name);
  cpSync(join(FIXTURES, "deploy-app"), dir, { recursive: true });
  for (const [path, content] of Object.entries(extra)) writeFileSync(join(dir, path), content);
  return dir;
}

describe("berth deploy, deployments, revisions and logs against a control plane", () => {
  let cp: ControlPlane;
  /** The real `berth` binary, connected through the environment, run in an empty folder. */
  let berth: (args: string[]) => Promise<Run>;
  const name = uniqueName("cli");
  let dir: string;
  let url: string;

  before(async () => {
    cp = await startControlPlane({ listener: true });
    const cwd = newDataDir("berth-cli-cwd-");
    berth = async (args) => {
      const child = spawn(process.execPath, [BERTH_BIN, ...args], {
        cwd,
        env: { ...process.env, BERTH_URL: cp.url, BERTH_API_KEY: cp.adminKey, BERTH_TENANT_ID: cp.defaultTenantId },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, "exit")) as [number | null];
      return { code, stdout, stderr };
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
    const revisions = JSON.parse((await berth(["revisions", "list", name, "--json"])).stdout) as {
      resources: { id: string; status: string }[];
    };
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

  test("a build that fails exits 1 with the reason and the log lines on stderr", async () => {
    const broken = project(uniqueName("cli-broken"), { "agent.ts": 'throw new Error("the model key is missing");\n' });
    const run = await berth(["deploy", broken]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /ended BUILD_FAILED: .*agent/);
    assert.match(run.stderr, /last \d+ build log lines:\n(.*\n)*.*the model key is missing/);
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

  test("every command answers --help on stdout", async () => {
    for (const command of ["deploy", "deployments", "revisions", "logs"]) {
      const run = await berth([command, "--help"]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`^Usage: berth ${command} `));
    }
  });

  test("deployments delete removes it", async () => {
    const run = await berth(["deployments", "delete", name]);
    assert.equal(run.code, 0, run.stderr);
    const got = await berth(["deployments", "get", name]);
    assert.equal(got.code, 1);
    assert.match(got.stderr, /no deployment named/);
  });
});
