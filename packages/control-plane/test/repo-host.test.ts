// repo_host deployments end to end with real git: repositories served by git's
// own smart-HTTP backend on loopback (and once by path), built and deployed by
// the embedded listener, rebuilt on a signed push webhook.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  revisionsOf,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";
import { CONTROL_PLANE_FIXTURES, finalRevision, logsOf } from "@berth/test-support";
import { type GitHost, startGitHost } from "@berth/test-support/git-host";
import { type SshHost, sshHostUnavailable, startSshHost } from "./helpers/ssh-host.js";

const WEBHOOK_SECRET = "a-webhook-secret-for-tests";
const AGENT = readFileSync(join(CONTROL_PLANE_FIXTURES, "deploy-app", "agent.ts"), "utf8");

/** The fixture agent answering `<greeting>: <message>` by default (no GREETING secret). */
const agentSaying = (greeting: string) =>
  AGENT.replace('process.env.GREETING ?? "hello"', `process.env.GREETING ?? "${greeting}"`);

/** A project of that agent, as a repository's files. */
const agentProject = (greeting: string) => ({
  "langgraph.json": JSON.stringify({ graphs: { agent: "./agent.ts:graph" } }),
  "agent.ts": agentSaying(greeting),
});

interface Integration {
  id: string;
  webhook_url: string;
  webhook_secret?: string;
  credentials: string | null;
}

describe("repo_host deployments: fetched from git at a ref, rebuilt on push", () => {
  let cp: ControlPlane;
  let host: GitHost;
  let integration: Integration;
  let firstSha: string;

  before(async () => {
    host = await startGitHost();
    firstSha = host.createRepository("agent.git", agentProject("first"));
    // The git host's folder is open to local integrations (which only the operator, the admin key here, may make).
    cp = await startControlPlane({
      listener: true,
      env: { BERTH_DRAIN_TIMEOUT_SECONDS: "2", BERTH_LOCAL_GIT_ROOTS: host.root },
    });
    const created = await cp.admin.post<Integration>("/v1/integrations/repo_host", {
      name: "loopback",
      kind: "git",
      base_url: host.url,
      webhook_secret: WEBHOOK_SECRET,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    integration = created.body;
  });
  after(async () => {
    await cp?.stop();
    await host?.close();
  });

  const deployRepo = (repoUrl: string, ref: string, extra: Record<string, unknown> = {}, integrationId = integration.id) =>
    createDeployment(cp.admin, {
      name: uniqueName("repo"),
      source: "repo_host",
      source_config: { integration_id: integrationId, repo_url: repoUrl, deployment_type: "dev", ...extra },
      source_revision_config: { repo_ref: ref, graph_config_path: "langgraph.json" },
      secrets: [],
    });

  const ask = async (deploymentId: string, text: string) => {
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`)).body.source_config.custom_url!;
    const output = await new Client({ apiUrl: url, apiKey: cp.adminKey }).runs.wait(null, "agent", {
      input: { messages: [{ type: "human", content: text }] },
    });
    const messages = (output as { messages: { content: string }[] }).messages;
    return messages[messages.length - 1]!.content;
  };

  const sendPush = (body: object, options: { delivery?: string; signature?: string | null } = {}) => {
    const text = JSON.stringify(body);
    const signature = `sha256=${createHmac("sha256", WEBHOOK_SECRET).update(text).digest("hex")}`;
    return fetch(`${cp.url}${integration.webhook_url}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-github-delivery": options.delivery ?? randomUUID(),
        ...(options.signature === null ? {} : { "x-hub-signature-256": options.signature ?? signature }),
      },
      body: text,
    });
  };

  test("the integration answers its webhook secret once and never its credentials", async () => {
    assert.equal(integration.webhook_secret, WEBHOOK_SECRET);
    const listed = await cp.admin.get<Integration[]>("/v1/integrations/repo_host/install");
    const mine = listed.body.find((entry) => entry.id === integration.id);
    assert.ok(mine);
    assert.equal(mine.webhook_secret, undefined);
    assert.equal(mine.credentials, null);
  });

  test("a deployment of main is DEPLOYED at the pushed commit; a signed push webhook deploys the new head", async () => {
    const deployment = await deployRepo(`${host.url}/agent.git`, "main", { build_on_push: true });
    const first = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
    assert.equal(first.status, "DEPLOYED", first.status_message ?? undefined);
    assert.equal(first.source_revision_config.repo_commit_sha, firstSha);
    assert.equal(await ask(deployment.id, "one"), "first: one");

    const secondSha = host.commit("agent.git", { "agent.ts": agentSaying("second") });
    const push = {
      ref: "refs/heads/main",
      after: secondSha,
      repository: { clone_url: `${host.url}/agent.git` },
    };
    const delivery = randomUUID();
    const accepted = await sendPush(push, { delivery });
    assert.equal(accepted.status, 202);
    const { revisions } = (await accepted.json()) as { revisions: string[] };
    assert.equal(revisions.length, 1);
    const second = await finalRevision(cp.admin, deployment.id, revisions[0]!);
    assert.equal(second.status, "DEPLOYED", second.status_message ?? undefined);
    assert.equal(second.source_revision_config.repo_commit_sha, secondSha);
    assert.equal(await ask(deployment.id, "two"), "second: two");

    // The same delivery again, the same head or an older one under another delivery id, another branch, a tag: nothing new.
    const replayed = await sendPush(push, { delivery });
    assert.equal(replayed.status, 202);
    assert.deepEqual(((await replayed.json()) as { revisions: string[] }).revisions, []);
    const sameHead = await sendPush(push);
    assert.deepEqual(((await sameHead.json()) as { revisions: string[] }).revisions, []);
    // A captured push of the older head, replayed under a new delivery id: that commit was built, nothing is rebuilt.
    const replayedOlder = await sendPush({ ...push, after: firstSha });
    assert.equal(replayedOlder.status, 202);
    assert.deepEqual(((await replayedOlder.json()) as { revisions: string[] }).revisions, []);
    const otherBranch = await sendPush({ ...push, ref: "refs/heads/feature" });
    assert.deepEqual(((await otherBranch.json()) as { revisions: string[] }).revisions, []);
    const tagPush = await sendPush({ ...push, ref: "refs/tags/v9", after: "1".repeat(40) });
    assert.deepEqual(((await tagPush.json()) as { revisions: string[] }).revisions, []);
    assert.equal((await revisionsOf(cp.admin, deployment.id)).length, 2);

    const build = (await logsOf(cp.admin, deployment.id, second.id, "build")).map((line) => line.message);
    assert.ok(
      build.some((line) => line.includes(secondSha)),
      build.join("\n"),
    );
  });

  test("redeploying a revision of an older commit serves that commit, records it, and reuses its build", async () => {
    const firstOfRepo = host.createRepository("rollback.git", agentProject("old"));
    const deployment = await deployRepo(`${host.url}/rollback.git`, "main", { build_on_push: true });
    const first = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
    assert.equal(first.status, "DEPLOYED", first.status_message ?? undefined);
    const newSha = host.commit("rollback.git", { "agent.ts": agentSaying("new") });
    const pushed = await sendPush({
      ref: "refs/heads/main",
      after: newSha,
      repository: { clone_url: `${host.url}/rollback.git` },
    });
    const [second] = ((await pushed.json()) as { revisions: string[] }).revisions;
    assert.equal((await finalRevision(cp.admin, deployment.id, second!)).status, "DEPLOYED");
    assert.equal(await ask(deployment.id, "now"), "new: now");

    const redeployed = await cp.admin.post<Deployment>(`/v2/deployments/${deployment.id}/revisions/${first.id}/redeploy`);
    assert.equal(redeployed.status, 200, JSON.stringify(redeployed.body));
    const rollback = await finalRevision(cp.admin, deployment.id, redeployed.body.latest_revision_id!);
    assert.equal(rollback.status, "DEPLOYED", rollback.status_message ?? undefined);
    assert.equal(rollback.source_revision_config.repo_commit_sha, firstOfRepo);
    assert.equal(await ask(deployment.id, "back"), "old: back");
    const build = (await logsOf(cp.admin, deployment.id, rollback.id, "build")).map((line) => line.message);
    assert.ok(
      build.some((line) => line.startsWith("Reusing the existing build")),
      build.join("\n"),
    );
  });

  test("a burst of pushes coalesces: the newest head is deployed, older revisions in progress end SKIPPED", async () => {
    host.createRepository("burst.git", agentProject("zero"));
    const deployment = await deployRepo(`${host.url}/burst.git`, "main", { build_on_push: true });
    assert.equal((await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!)).status, "DEPLOYED");
    const made: string[] = [];
    let head = "";
    for (const greeting of ["one", "two", "three"]) {
      head = host.commit("burst.git", { "agent.ts": agentSaying(greeting) });
      const response = await sendPush({
        ref: "refs/heads/main",
        after: head,
        repository: { clone_url: `${host.url}/burst.git` },
      });
      made.push(...((await response.json()) as { revisions: string[] }).revisions);
    }
    // A push's revision fetches the branch's head, which may already be a later push's commit: that later push
    // then finds its commit had and makes nothing. So each push makes at most one revision, and the first one does.
    assert.ok(made.length >= 1 && made.length <= 3, JSON.stringify(made));
    const latest = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body.latest_revision_id!;
    assert.equal(latest, made.at(-1));
    const newest = await finalRevision(cp.admin, deployment.id, latest);
    assert.equal(newest.status, "DEPLOYED", newest.status_message ?? undefined);
    assert.equal(newest.source_revision_config.repo_commit_sha, head);
    assert.equal(await ask(deployment.id, "burst"), "three: burst");
    // The older ones were overtaken: skipped while in progress, or deployed before the next push came (never failed).
    for (const id of made.slice(0, -1)) {
      const older = await finalRevision(cp.admin, deployment.id, id);
      assert.ok(["SKIPPED", "DEPLOYED"].includes(older.status), `${id}: ${older.status} ${older.status_message}`);
    }
  });

  test("a badly signed or unsigned webhook is a 401 and changes nothing; an unknown integration is a 404", async () => {
    const push = { ref: "refs/heads/main", after: "2".repeat(40), repository: { clone_url: `${host.url}/agent.git` } };
    const wrong = await sendPush(push, { signature: `sha256=${"0".repeat(64)}` });
    assert.equal(wrong.status, 401);
    assert.match(((await wrong.json()) as { detail: string }).detail, /signature/);
    const unsigned = await sendPush(push, { signature: null });
    assert.equal(unsigned.status, 401);
    const unknown = await fetch(`${cp.url}/v1/integrations/repo_host/${randomUUID()}/webhook`, { method: "POST", body: "{}" });
    assert.equal(unknown.status, 404);
  });

  test("a tag is deployed at its commit", async () => {
    const tagged = host.tag("agent.git", "v1");
    const deployment = await deployRepo(`${host.url}/agent.git`, "refs/tags/v1");
    const revision = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    assert.equal(revision.source_revision_config.repo_commit_sha, tagged);
  });

  test("an unknown branch, and a repository without the graph configuration, end BUILD_FAILED saying so", async () => {
    const missing = await deployRepo(`${host.url}/agent.git`, "no-such-branch");
    const failed = await finalRevision(cp.admin, missing.id, missing.latest_revision_id!);
    assert.equal(failed.status, "BUILD_FAILED");
    assert.match(failed.status_message ?? "", /no-such-branch/);

    host.createRepository("empty.git", { "README.md": "no graphs here\n" });
    const bare = await deployRepo(`${host.url}/empty.git`, "main");
    const noConfig = await finalRevision(cp.admin, bare.id, bare.latest_revision_id!);
    assert.equal(noConfig.status, "BUILD_FAILED");
    assert.match(noConfig.status_message ?? "", /langgraph\.json/);
  });

  test("a private repository deploys with the integration's token; without it the build fails on authentication", async () => {
    host.createRepository("private/agent.git", agentProject("private"));
    const withToken = await cp.admin.post<Integration>("/v1/integrations/repo_host", {
      name: "private",
      kind: "git",
      base_url: host.url,
      credentials: { token: host.token },
    });
    assert.equal(withToken.status, 201);
    assert.equal(withToken.body.credentials, "token");
    const deployment = await deployRepo(`${host.url}/private/agent.git`, "main", {}, withToken.body.id);
    const revision = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    assert.equal(await ask(deployment.id, "secret"), "private: secret");
    const logs = (await logsOf(cp.admin, deployment.id, revision.id, "build")).map((line) => line.message).join("\n");
    assert.ok(!logs.includes(host.token), "the token is never in the build log");

    const anonymous = await deployRepo(`${host.url}/private/agent.git`, "main");
    const refused = await finalRevision(cp.admin, anonymous.id, anonymous.latest_revision_id!);
    assert.equal(refused.status, "BUILD_FAILED");
    assert.match(refused.status_message ?? "", /authenticat/i);
  });

  test("a local integration (the operator's, under BERTH_LOCAL_GIT_ROOTS) deploys a bare repository by its path", async () => {
    const local = await cp.admin.post<Integration>("/v1/integrations/repo_host", {
      name: "folder",
      kind: "local",
      base_url: host.root,
    });
    assert.equal(local.status, 201, JSON.stringify(local.body));
    const repos = await cp.admin.get<{ url: string; default_branch: string }[]>(
      `/v1/integrations/repo_host/${local.body.id}/repos`,
    );
    assert.ok(repos.body.some((repo) => repo.url === join(host.root, "agent.git") && repo.default_branch === "main"));
    const deployment = await deployRepo(join(host.root, "agent.git"), "main", {}, local.body.id);
    const revision = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);

    const outside = await cp.admin.post("/v2/deployments", {
      name: uniqueName("outside"),
      source: "repo_host",
      source_config: { integration_id: local.body.id, repo_url: "/etc", deployment_type: "dev" },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [],
    });
    assert.equal(outside.status, 400);
  });

  test("hosted kinds list repositories from the host's API with the token (a recorded fake of GitHub, Gitea and GitLab answers)", async () => {
    // No such host runs here: a fake answering their documented listing endpoints with the shapes they send.
    const seen: { path: string; authorization?: string; token?: string }[] = [];
    const fake = http.createServer((request, response) => {
      const path = request.url ?? "";
      seen.push({
        path,
        authorization: request.headers.authorization,
        token: request.headers["private-token"] as string | undefined,
      });
      const githubLike = [
        { id: 11, name: "agent", owner: { login: "acme" }, clone_url: "https://h/acme/agent.git", default_branch: "main" },
      ];
      const gitlab = [
        {
          id: 21,
          path: "bot",
          namespace: { full_path: "team" },
          http_url_to_repo: "https://h/team/bot.git",
          default_branch: "dev",
        },
      ];
      const body = path.startsWith("/api/v4/")
        ? gitlab
        : path.startsWith("/api/v3/") || path.startsWith("/api/v1/")
          ? githubLike
          : [];
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    try {
      const listing = async (kind: string) => {
        const created = await cp.admin.post<Integration>("/v1/integrations/repo_host", {
          name: kind,
          kind,
          base_url: base,
          credentials: { token: `${kind}-token` },
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const repos = await cp.admin.get<{ name: string; owner: string; url: string; default_branch: string }[]>(
          `/v1/integrations/repo_host/${created.body.id}/repos`,
        );
        assert.equal(repos.status, 200, JSON.stringify(repos.body));
        return repos.body.map(({ name, owner, url, default_branch }) => ({ name, owner, url, default_branch }));
      };
      const agent = { name: "agent", owner: "acme", url: "https://h/acme/agent.git", default_branch: "main" };
      assert.deepEqual(await listing("github"), [agent]);
      assert.deepEqual(await listing("gitea"), [agent]);
      assert.deepEqual(await listing("gitlab"), [
        { name: "bot", owner: "team", url: "https://h/team/bot.git", default_branch: "dev" },
      ]);
      assert.deepEqual(
        seen.map(({ path, authorization, token }) => [path.split("?")[0], authorization ?? token]),
        [
          ["/api/v3/user/repos", "Bearer github-token"],
          ["/api/v1/user/repos", "token gitea-token"],
          ["/api/v4/projects", "gitlab-token"],
        ],
      );
    } finally {
      await new Promise((resolve) => fake.close(resolve));
    }
  });

  test("an integration in use cannot be deleted (409); unused, it is deleted", async () => {
    const inUse = await cp.admin.delete(`/v1/integrations/repo_host/${integration.id}`);
    assert.equal(inUse.status, 409);
    const spare = await cp.admin.post<Integration>("/v1/integrations/repo_host", { name: "spare", kind: "git" });
    assert.equal((await cp.admin.delete(`/v1/integrations/repo_host/${spare.body.id}`)).status, 204);
    assert.equal((await cp.admin.get(`/v1/integrations/repo_host/${spare.body.id}`)).status, 404);
  });
});

describe("repo_host with build_on_push and no webhooks: the listener polls the tracked branch", () => {
  let cp: ControlPlane;
  let host: GitHost;

  before(async () => {
    host = await startGitHost();
    cp = await startControlPlane({ listener: true, env: { BERTH_REPO_POLL_SECONDS: "0.5", BERTH_DRAIN_TIMEOUT_SECONDS: "2" } });
  });
  after(async () => {
    await cp?.stop();
    await host?.close();
  });

  test("a push the control plane never hears of is deployed by the poll", async () => {
    host.createRepository("polled.git", agentProject("before"));
    const created = await cp.admin.post<Integration>("/v1/integrations/repo_host", {
      name: "polled",
      kind: "git",
      base_url: host.url,
    });
    const deployment = await createDeployment(cp.admin, {
      name: uniqueName("polled"),
      source: "repo_host",
      source_config: {
        integration_id: created.body.id,
        repo_url: `${host.url}/polled.git`,
        deployment_type: "dev",
        build_on_push: true,
      },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [],
    });
    assert.equal((await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!)).status, "DEPLOYED");

    const moved = host.commit("polled.git", { "agent.ts": agentSaying("after") });
    let latest = deployment.latest_revision_id!;
    while (latest === deployment.latest_revision_id) {
      const current = await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
      latest = current.body.latest_revision_id!;
      if (latest === deployment.latest_revision_id) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const revision = await finalRevision(cp.admin, deployment.id, latest);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    assert.equal(revision.source_revision_config.repo_commit_sha, moved);
    // The head it deployed is not deployed again.
    assert.equal((await revisionsOf(cp.admin, deployment.id)).length, 2);
  });

  test("a rollback to an older commit stays until the branch moves again", async () => {
    const firstSha = host.createRepository("rolled.git", agentProject("before"));
    const created = await cp.admin.post<Integration>("/v1/integrations/repo_host", {
      name: "rolled",
      kind: "git",
      base_url: host.url,
    });
    const deployment = await createDeployment(cp.admin, {
      name: uniqueName("rolled"),
      source: "repo_host",
      source_config: {
        integration_id: created.body.id,
        repo_url: `${host.url}/rolled.git`,
        deployment_type: "dev",
        build_on_push: true,
      },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [],
    });
    const first = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
    assert.equal(first.status, "DEPLOYED");
    const headSha = host.commit("rolled.git", { "agent.ts": agentSaying("after") });
    const second = await nextRevision(deployment.id, first.id);
    assert.equal(second.source_revision_config.repo_commit_sha, headSha);

    const redeployed = await cp.admin.post<Deployment>(`/v2/deployments/${deployment.id}/revisions/${first.id}/redeploy`);
    assert.equal(redeployed.status, 200, JSON.stringify(redeployed.body));
    const rollback = await finalRevision(cp.admin, deployment.id, redeployed.body.latest_revision_id!);
    assert.equal(rollback.status, "DEPLOYED", rollback.status_message ?? undefined);
    assert.equal(rollback.source_revision_config.repo_commit_sha, firstSha);
    // Two more looks at the branch: at least one whole poll round ran while the rollback served, and made nothing.
    await host.refsAsked("rolled.git", 2);
    const revisions = await revisionsOf(cp.admin, deployment.id);
    assert.equal(revisions.length, 3, revisions.map((revision) => revision.status_message).join("\n"));

    const newerSha = host.commit("rolled.git", { "agent.ts": agentSaying("newer") });
    const pushed = await nextRevision(deployment.id, rollback.id);
    assert.equal(pushed.source_revision_config.repo_commit_sha, newerSha);
  });

  /** The first revision after `after`, once it is final (the poll makes it). */
  async function nextRevision(deploymentId: string, after: string) {
    let latest = after;
    while (latest === after) {
      latest = (await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`)).body.latest_revision_id!;
      if (latest === after) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const revision = await finalRevision(cp.admin, deploymentId, latest);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    return revision;
  }
});

const sshUnavailable = sshHostUnavailable();
if (sshUnavailable) process.stderr.write(`\n*** SKIPPED: repo_host over SSH: ${sshUnavailable} ***\n\n`);

describe("repo_host over SSH: a real OpenSSH server, the integration's key and known_hosts entry", {
  skip: sshUnavailable,
}, () => {
  let cp: ControlPlane;
  let host: GitHost;
  let ssh: SshHost;

  before(async () => {
    host = await startGitHost();
    host.createRepository("ssh-agent.git", agentProject("over ssh"));
    ssh = await startSshHost();
    cp = await startControlPlane({ listener: true, env: { BERTH_DRAIN_TIMEOUT_SECONDS: "2" } });
  });
  after(async () => {
    await cp?.stop();
    await ssh?.close();
    await host?.close();
  });

  const sshIntegration = async (name: string, privateKey: string, knownHosts: string) => {
    const created = await cp.admin.post<Integration>("/v1/integrations/repo_host", {
      name,
      kind: "git",
      base_url: ssh.url,
      credentials: { ssh_private_key: privateKey, known_hosts: knownHosts },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body;
  };
  const deployOver = (integration: Integration) =>
    createDeployment(cp.admin, {
      name: uniqueName("ssh"),
      source: "repo_host",
      source_config: {
        integration_id: integration.id,
        repo_url: `${ssh.url}${join(host.root, "ssh-agent.git")}`,
        deployment_type: "dev",
      },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [],
    });

  test("the accepted key deploys the branch; the key is in no log", async () => {
    const integration = await sshIntegration("ssh", ssh.privateKey, ssh.knownHosts);
    assert.equal(integration.credentials, "ssh");
    const deployment = await deployOver(integration);
    const revision = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    assert.match(revision.source_revision_config.repo_commit_sha ?? "", /^[0-9a-f]{40}$/);
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body.source_config.custom_url!;
    const output = await new Client({ apiUrl: url, apiKey: cp.adminKey }).runs.wait(null, "agent", {
      input: { messages: [{ type: "human", content: "hi" }] },
    });
    const messages = (output as { messages: { content: string }[] }).messages;
    assert.equal(messages.at(-1)!.content, "over ssh: hi");
    const logs = (await logsOf(cp.admin, deployment.id, revision.id, "build")).map((line) => line.message).join("\n");
    const keyBody = ssh.privateKey.split("\n")[1]!;
    assert.ok(!logs.includes(keyBody), "the private key is never in the build log");
  });

  test("a key the server refuses, or a host key that differs from known_hosts, ends BUILD_FAILED saying which", async () => {
    const stranger = await deployOver(await sshIntegration("ssh-stranger", ssh.strangerKey, ssh.knownHosts));
    const refused = await finalRevision(cp.admin, stranger.id, stranger.latest_revision_id!);
    assert.equal(refused.status, "BUILD_FAILED");
    assert.match(refused.status_message ?? "", /authenticat|refused the SSH key/i);

    const otherHostKey = ssh.knownHosts.replace(
      /ssh-ed25519 \S+/,
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHvLAi6Z6eOcTcOgKu6TgPCzVnZ4RdYqUc3xIBf0LHQf",
    );
    const spoofed = await deployOver(await sshIntegration("ssh-spoofed", ssh.privateKey, otherHostKey));
    const unverified = await finalRevision(cp.admin, spoofed.id, spoofed.latest_revision_id!);
    assert.equal(unverified.status, "BUILD_FAILED");
    assert.match(unverified.status_message ?? "", /host key/i);
  });
});
