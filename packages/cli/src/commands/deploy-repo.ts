import type { Integration, Repository } from "@berth/control-plane/wire";
import type { ControlPlaneClient, Deployment } from "./client.js";
import { mergeSecrets, type SecretEntry } from "./env-file.js";
import { followToOutcome } from "./follow.js";
import { UsageError } from "./integration-credentials.js";
import { integrationOf } from "./integrations.js";

/** The parseArgs options of `berth deploy --repo`. */
export const REPO_OPTIONS = {
  repo: { type: "string" },
  branch: { type: "string" },
  tag: { type: "string" },
  integration: { type: "string" },
  config: { type: "string" },
  "build-on-push": { type: "boolean" },
  "no-build-on-push": { type: "boolean" },
} as const;

export interface RepoFlags {
  repo?: string;
  branch?: string;
  tag?: string;
  integration?: string;
  config?: string;
  "build-on-push"?: boolean;
  "no-build-on-push"?: boolean;
}

/** The flags that mean something only with --repo: given without it, the command line is wrong. */
export function repoOnlyFlags(flags: RepoFlags): string[] {
  return (["branch", "tag", "integration", "config", "build-on-push", "no-build-on-push"] as const)
    .filter((flag) => flags[flag] !== undefined)
    .map((flag) => `--${flag}`);
}

interface RepoDeploy {
  name?: string;
  secrets?: SecretEntry[];
  json: boolean;
  say: (text: string) => void;
}

/**
 * `berth deploy --repo <url>`: creates the repo_host deployment of that name,
 * or makes a new revision of it (the ref's head fetched again), then follows
 * the revision as a deploy of a folder does.
 */
export async function deployRepository(
  client: ControlPlaneClient,
  flags: RepoFlags & { repo: string },
  { name: givenName, secrets, json, say }: RepoDeploy,
): Promise<number> {
  if (flags.branch !== undefined && flags.tag !== undefined) throw new UsageError("--branch or --tag, not both");
  if (flags["build-on-push"] && flags["no-build-on-push"]) throw new UsageError("--build-on-push or --no-build-on-push");
  if (flags.tag !== undefined && flags["build-on-push"]) {
    throw new UsageError("a tag does not move: --build-on-push tracks a --branch");
  }
  const name = givenName ?? repositoryName(flags.repo);
  const buildOnPush = flags["build-on-push"] ? true : flags["no-build-on-push"] ? false : undefined;
  const tagRef = flags.tag === undefined ? undefined : `refs/tags/${flags.tag.replace(/^refs\/tags\//, "")}`;

  const existing = await client.findByName(name);
  let deployment: Deployment;
  if (existing) {
    checkSameRepository(existing, flags.repo);
    if (flags.integration !== undefined) {
      const integration = await integrationOf(client, flags.integration);
      if (integration.id !== existing.source_config.integration_id) {
        throw new Error(`deployment "${name}" uses another integration (${existing.source_config.integration_id})`);
      }
    }
    const ref = flags.branch ?? tagRef ?? existing.source_revision_config.repo_ref;
    deployment = await client.request<Deployment>("PATCH", `/v2/deployments/${existing.id}`, {
      ...(buildOnPush === undefined ? {} : { source_config: { build_on_push: buildOnPush } }),
      source_revision_config: {
        repo_ref: ref,
        graph_config_path: flags.config ?? existing.source_revision_config.graph_config_path,
      },
      ...(secrets === undefined ? {} : { secrets: mergeSecrets(existing.secrets, secrets) }),
    });
    say(`updating deployment ${name} (${existing.id}) to ${ref}\n`);
  } else {
    const integration = await chooseIntegration(client, flags.repo, flags.integration);
    const ref = flags.branch ?? tagRef ?? (await defaultBranch(client, integration, flags.repo));
    deployment = await client.request<Deployment>("POST", "/v2/deployments", {
      name,
      source: "repo_host",
      source_config: {
        integration_id: integration.id,
        repo_url: flags.repo,
        ...(buildOnPush === undefined ? {} : { build_on_push: buildOnPush }),
      },
      source_revision_config: { repo_ref: ref, graph_config_path: flags.config ?? "langgraph.json" },
      secrets: secrets ?? [],
    });
    say(`created deployment ${name} (${deployment.id}) of ${flags.repo} at ${ref}, through ${integration.name}\n`);
  }
  const revisionId = deployment.latest_revision_id;
  if (!revisionId) throw new Error("the control plane answered no revision");
  return followToOutcome("deploy", client, deployment, revisionId, json);
}

/** `agent` of `https://host/team/agent.git`, `git@host:team/agent.git` or `/srv/git/agent.git`. */
function repositoryName(url: string): string {
  const last =
    url
      .replace(/[/\\]+$/, "")
      .split(/[/:\\]/)
      .pop() ?? "";
  const name = last.replace(/\.git$/, "");
  if (!name) throw new UsageError(`cannot name a deployment after ${url}: give --name`);
  return name;
}

/** As the control plane compares repository URLs: case, a trailing `/` and `.git` aside. */
const sameUrl = (a: string, b: string) => {
  const normal = (url: string) =>
    url
      .trim()
      .replace(/\/+$/, "")
      .replace(/\.git$/, "")
      .toLowerCase();
  return normal(a) === normal(b);
};

function checkSameRepository(existing: Deployment, repo: string): void {
  if (existing.source !== "repo_host") {
    throw new Error(`deployment "${existing.name}" is a ${existing.source} deployment: choose another --name`);
  }
  const tracked = existing.source_config.repo_url ?? "";
  if (!sameUrl(tracked, repo)) {
    throw new Error(
      `deployment "${existing.name}" deploys ${tracked}; a deployment's repository cannot change: choose another --name`,
    );
  }
}

/**
 * The integration named, else the workspace's only one, else the only one
 * whose base URL holds the repository; otherwise the user must choose.
 */
async function chooseIntegration(client: ControlPlaneClient, repo: string, ref: string | undefined): Promise<Integration> {
  if (ref !== undefined) return integrationOf(client, ref);
  const integrations = await client.request<Integration[]>("GET", "/v1/integrations/repo_host/install");
  if (integrations.length === 1) return integrations[0]!;
  if (integrations.length === 0) {
    throw new Error("the workspace has no git integration: add one with berth integrations add (docs/git-deployments.md)");
  }
  const under = (base: string) => repo.toLowerCase().startsWith(`${base.toLowerCase().replace(/\/+$/, "")}/`);
  const holding = integrations.filter((i) => i.base_url && under(i.base_url));
  if (holding.length === 1) return holding[0]!;
  const names = integrations.map((i) => `  ${i.name} (${i.kind}, ${i.base_url ?? "no base URL"})`).join("\n");
  throw new Error(`choose the integration of ${repo} with --integration; the workspace has:\n${names}`);
}

/** The repository's default branch as the integration lists it; main when it is not listed (or the listing fails). */
async function defaultBranch(client: ControlPlaneClient, integration: Integration, repo: string): Promise<string> {
  try {
    const repositories = await client.request<Repository[]>("GET", `/v1/integrations/repo_host/${integration.id}/repos`);
    return repositories.find((repository) => sameUrl(repository.url, repo))?.default_branch || "main";
  } catch {
    return "main";
  }
}
