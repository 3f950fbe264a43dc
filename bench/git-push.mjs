#!/usr/bin/env node
// `node bench/git-push.mjs`: seconds from `git push` to DEPLOYED for a repo_host deployment with build_on_push on the
// embedded listener (local compute): a push of changed code with unchanged dependencies, announced by a signed push
// webhook, then fetched, built (the install comes from the lockfile cache) and switched to. The first deploy (cold
// install) is reported apart. The repository is a bare one on this machine, through a `local` integration.
// Prints a table and writes bench/results/git-push-<time>.json. Not a test: figures depend on the machine.
import { execFileSync } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startBenchControlPlane } from "./control-plane.mjs";

const benchDir = dirname(fileURLToPath(import.meta.url));
const project = join(benchDir, "projects", "deploy-chat");
const PUSHES = Number(process.env.BENCH_REPEATS ?? 5);
const secret = "bench-webhook-secret-0123456789";

const repos = mkdtempSync(join(tmpdir(), "berth-bench-repos-"));
const work = mkdtempSync(join(tmpdir(), "berth-bench-work-"));
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
};
const git = (cwd, ...args) => execFileSync("git", args, { cwd, env: gitEnv, encoding: "utf8" }).trim();

const bare = join(repos, "chat.git");
mkdirSync(bare);
git(bare, "init", "--quiet", "--bare", "--initial-branch=main");
const clone = join(work, "chat");
git(work, "clone", "--quiet", bare, clone);
git(clone, "checkout", "--quiet", "-b", "main");
cpSync(project, clone, { recursive: true, filter: (path) => !path.includes("node_modules") });
git(clone, "add", "-A");
git(clone, "commit", "--quiet", "-m", "first");
git(clone, "push", "--quiet", "origin", "main");

const { url, call, untilDeployed, stop } = await startBenchControlPlane({ BERTH_LOCAL_GIT_ROOTS: repos });

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = { first: 0, pushes: [] };
try {
  const integration = await call("POST", "/v1/integrations/repo_host", {
    name: "bench",
    kind: "local",
    base_url: repos,
    webhook_secret: secret,
  });
  let started = performance.now();
  const deployment = await call("POST", "/v2/deployments", {
    name: "bench-git",
    source: "repo_host",
    source_config: { integration_id: integration.id, repo_url: bare, deployment_type: "prod", build_on_push: true },
    source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
    secrets: [],
  });
  await untilDeployed(deployment.id, deployment.latest_revision_id);
  results.first = (performance.now() - started) / 1000;

  for (let push = 1; push <= PUSHES; push++) {
    const agent = join(clone, "src/agent.ts");
    writeFileSync(agent, `${readFileSync(agent, "utf8")}\n// push ${push}\n`);
    started = performance.now();
    git(clone, "commit", "--quiet", "-am", `push ${push}`);
    git(clone, "push", "--quiet", "origin", "main");
    const body = JSON.stringify({
      ref: "refs/heads/main",
      after: git(clone, "rev-parse", "HEAD"),
      repository: { clone_url: bare },
    });
    const response = await fetch(`${url}${integration.webhook_url}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
      },
      body,
    });
    const { revisions } = await response.json();
    await untilDeployed(deployment.id, revisions[0]);
    results.pushes.push((performance.now() - started) / 1000);
  }
} finally {
  stop();
}

console.log("\n| git push → DEPLOYED (local compute, signed webhook) | seconds |\n|---|---:|");
console.log(
  `| first deploy of the branch (fetch, npm ci with a cold install cache, build, start) | ${results.first.toFixed(1)} |`,
);
console.log(`| push of changed code, dependencies unchanged (median of ${PUSHES}) | ${median(results.pushes).toFixed(1)} |`);
mkdirSync(join(benchDir, "results"), { recursive: true });
writeFileSync(
  join(benchDir, "results", `git-push-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
  JSON.stringify(results, null, 2),
);
