// Runs in the SQLite pass only: its subject is the CLI,
// where the control plane's database plays no part.
// `berth integrations` and `berth deploy --repo` against a control plane with its embedded listener, the
// repositories served by git's own smart-HTTP backend on loopback and read by path (a local integration), a push to
// which reaches the control plane through the post-receive hook `berth integrations hook` prints.
import assert from "node:assert/strict";
import { chmodSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { CONTROL_PLANE_FIXTURES, type ControlPlane, newDataDir, startControlPlane, uniqueName } from "@berth/test-support";
import { type GitHost, startGitHost } from "@berth/test-support/git-host";
import { askAgent, type Berth, berthAgainst } from "./helpers/remote-cli.js";

const AGENT = readFileSync(join(CONTROL_PLANE_FIXTURES, "deploy-app", "agent.ts"), "utf8");

/** A project whose agent answers `<greeting>: <message>` (no GREETING secret). */
const agentProject = (greeting: string) => ({
  "langgraph.json": JSON.stringify({ graphs: { agent: "./agent.ts:graph" } }),
  "agent.ts": AGENT.replace('process.env.GREETING ?? "hello"', `process.env.GREETING ?? "${greeting}"`),
});

interface Integration {
  id: string;
  name: string;
  kind: string;
  webhook_url: string;
  webhook_secret: string;
}

describe("berth integrations and deploy --repo", () => {
  let cp: ControlPlane;
  let host: GitHost;
  let berth: Berth;
  /** The git host's folder, symlinks resolved: the local integration's. */
  let root: string;
  const secretFile = join(newDataDir("berth-cli-hook-"), "webhook-secret");

  before(async () => {
    host = await startGitHost();
    host.createRepository("agent.git", agentProject("first"));
    host.tag("agent.git", "v1");
    root = realpathSync(host.root);
    cp = await startControlPlane({ listener: true, env: { BERTH_LOCAL_GIT_ROOTS: root } });
    berth = berthAgainst(cp);
  });
  after(async () => {
    await cp?.stop();
    await host?.close();
  });

  test("integrations add creates them over the API, printing the webhook secret once; list shows them", async () => {
    const none = await berth(["integrations", "list"]);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "no integrations\n");

    const http = await berth(["integrations", "add", "--name", "loopback", "--base-url", host.url]);
    assert.equal(http.code, 0, http.stderr);
    assert.match(http.stdout, /^kind +git$/m);
    assert.match(http.stdout, new RegExp(`^webhook url +${cp.url}/v1/integrations/repo_host/[0-9a-f-]{36}/webhook$`, "m"));
    assert.match(http.stdout, /^webhook secret +\S{16,}$/m);

    writeFileSync(secretFile, "a-webhook-secret-for-the-cli-test\n");
    const local = await berth([
      "integrations",
      "add",
      "--name",
      "disk",
      "--kind",
      "local",
      "--base-url",
      root,
      "--webhook-secret-file",
      secretFile,
      "--json",
    ]);
    assert.equal(local.code, 0, local.stderr);
    const created = JSON.parse(local.stdout) as Integration;
    assert.deepEqual([created.kind, created.webhook_secret], ["local", "a-webhook-secret-for-the-cli-test"]);

    const list = await berth(["integrations", "list"]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^NAME +ID +KIND +BASE URL +CREDENTIALS$/m);
    assert.match(list.stdout, new RegExp(`^loopback +[0-9a-f-]{36} +git +${host.url}`, "m"));
    assert.match(list.stdout, new RegExp(`^disk +${created.id} +local +${root}`, "m"));
    const json = JSON.parse((await berth(["integrations", "list", "--json"])).stdout) as Integration[];
    assert.deepEqual(json.map((i) => i.name).sort(), ["disk", "loopback"]);
  });

  test("deploy --repo --tag creates a repo_host deployment through the integration holding the URL, and prints its URL", async () => {
    const run = await berth(["deploy", "--repo", `${host.url}/agent.git`, "--tag", "v1"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /created deployment agent \([0-9a-f-]{36}\) of .*agent\.git at refs\/tags\/v1, through loopback/);
    assert.match(run.stderr, /: DEPLOYED \(/);
    const url = run.stdout.trim();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/d\/[0-9a-f-]{36}$/);
    assert.equal(await askAgent(cp, url, "hi"), "first: hi");

    const got = JSON.parse((await berth(["deployments", "get", "agent", "--json"])).stdout) as {
      source: string;
      source_revision_config: { repo_ref: string };
    };
    assert.deepEqual([got.source, got.source_revision_config.repo_ref], ["repo_host", "refs/tags/v1"]);
  });

  test("deploy --repo refuses what cannot work, before creating anything", async () => {
    const both = await berth(["deploy", "--repo", `${host.url}/agent.git`, "--branch", "main", "--tag", "v1"]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--branch or --tag, not both/);
    const moving = await berth(["deploy", "--repo", `${host.url}/agent.git`, "--tag", "v1", "--build-on-push"]);
    assert.equal(moving.code, 2);
    const other = await berth(["deploy", "--repo", `${host.url}/other.git`, "--name", "agent"]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /deployment "agent" deploys .*agent\.git; a deployment's repository cannot change/);
    const unknown = await berth(["deploy", "--repo", `${root}/agent.git`, "--name", "nowhere", "--integration", "nowhere"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no integration "nowhere"; the workspace has:\n/);
    assert.match(unknown.stderr, /^ {2}disk \([0-9a-f-]{36}, local\)$/m);
    assert.match(unknown.stderr, /^ {2}loopback \([0-9a-f-]{36}, git\)$/m);
    const none = await berth(["deployments", "get", "nowhere"]);
    assert.match(none.stderr, /no deployment named "nowhere"/, "nothing was created");
    const folder = await berth(["deploy", "--branch", "main"]);
    assert.equal(folder.code, 2);
    assert.match(folder.stderr, /--branch: only with --repo/);
  });

  test("integrations hook prints a post-receive hook: a push to the local repository deploys the new head", async () => {
    const name = uniqueName("cli-local");
    const run = await berth([
      "deploy",
      "--repo",
      `${root}/agent.git`,
      "--name",
      name,
      "--integration",
      "disk",
      "--branch",
      "main",
      "--build-on-push",
    ]);
    assert.equal(run.code, 0, run.stderr);
    const url = run.stdout.trim();
    assert.equal(await askAgent(cp, url, "hi"), "first: hi");

    const refused = await berth(["integrations", "hook", "disk"]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--webhook-secret-file <file> .* or --rotate-secret/);
    const hosted = await berth(["integrations", "hook", "loopback", "--webhook-secret-file", secretFile]);
    assert.equal(hosted.code, 1);
    assert.match(hosted.stderr, /loopback is a git integration: its host sends the push webhooks itself/);

    const hook = await berth(["integrations", "hook", "disk", "--webhook-secret-file", secretFile]);
    assert.equal(hook.code, 0, hook.stderr);
    assert.match(hook.stdout, /^#!\S+node/);
    const hookFile = join(root, "agent.git", "hooks", "post-receive");
    writeFileSync(hookFile, hook.stdout);
    chmodSync(hookFile, 0o755);

    // The hook runs inside the push, so the revision exists once it returns; follow it to its end.
    host.commit("agent.git", agentProject("second"));
    const follow = await berth(["logs", name, "--build", "--follow"]);
    assert.equal(follow.code, 0, follow.stderr);
    assert.equal(await askAgent(cp, url, "hi"), "second: hi");
  });

  test("deploy --repo of an existing name makes a new revision of the ref it tracks", async () => {
    const run = await berth(["deploy", "--repo", `${host.url}/agent.git`, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { name: string; status: string; url: string };
    assert.deepEqual([result.name, result.status], ["agent", "DEPLOYED"]);
    assert.equal(await askAgent(cp, result.url, "hi"), "first: hi", "still the tag v1, not main's head");
  });

  test("--help of secrets and integrations prints their usage", async () => {
    for (const command of [["secrets"], ["integrations"], ["integrations", "hook"], ["secrets", "set"]]) {
      const run = await berth([...command, "--help"]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`^Usage: berth ${command[0]}`));
    }
  });
});
