import { BadRequestError } from "@berth/service-kit";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { GitCredentials } from "../domain/git-integrations.js";
import type { IntegrationRecord, RepositoryRecord } from "../storage/types.js";

const LIST_TIMEOUT_MS = 15_000;

/**
 * The repositories an integration's host shows it: the bare repositories in
 * a local integration's folder, or what the host's API lists for its token
 * (GitHub `/user/repos`, Gitea and Forgejo `/api/v1/user/repos`, GitLab
 * `/api/v4/projects?membership=true`). A plain git server lists nothing.
 */
export async function listHostRepositories(
  integration: IntegrationRecord,
  credentials: GitCredentials | null,
): Promise<RepositoryRecord[]> {
  const base = integration.base_url;
  if (!base) return [];
  if (integration.kind === "local") return bareRepositoriesIn(base);
  if (integration.kind === "git") return [];
  const token = credentials?.kind === "token" ? credentials.token : undefined;
  if (!token) return [];
  switch (integration.kind) {
    case "github":
      return (await getJson(githubApi(base, "/user/repos?per_page=100"), { authorization: `Bearer ${token}` })).map(
        fromGithubLike,
      );
    case "gitea":
      return (await getJson(`${base}/api/v1/user/repos?limit=50`, { authorization: `token ${token}` })).map(fromGithubLike);
    case "gitlab":
      return (await getJson(`${base}/api/v4/projects?membership=true&simple=true&per_page=100`, { "private-token": token })).map(
        fromGitlab,
      );
  }
}

/** GitHub's API is api.github.com for github.com, `<host>/api/v3` for an Enterprise server. */
function githubApi(base: string, path: string): string {
  const url = new URL(base);
  if (url.hostname === "github.com" || url.hostname === "api.github.com") return `https://api.github.com${path}`;
  return `${base}/api/v3${path}`;
}

async function getJson(url: string, headers: Record<string, string>): Promise<Record<string, unknown>[]> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: "application/json", ...headers },
      signal: AbortSignal.timeout(LIST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new BadRequestError(`The integration's host did not answer (${url}): ${(error as Error).message}`);
  }
  if (!response.ok)
    throw new BadRequestError(`The integration's host refused to list repositories: ${response.status} from ${url}`);
  const body: unknown = await response.json();
  if (!Array.isArray(body)) throw new BadRequestError(`The integration's host answered something else than a list from ${url}`);
  return body as Record<string, unknown>[];
}

function fromGithubLike(repo: Record<string, unknown>): RepositoryRecord {
  const owner = (repo.owner as { login?: string } | undefined)?.login ?? "";
  return {
    id: Number(repo.id),
    name: String(repo.name),
    owner,
    url: String(repo.clone_url ?? repo.html_url),
    default_branch: String(repo.default_branch ?? "main"),
  };
}

function fromGitlab(project: Record<string, unknown>): RepositoryRecord {
  const namespace = (project.namespace as { full_path?: string } | undefined)?.full_path ?? "";
  return {
    id: Number(project.id),
    name: String(project.path ?? project.name),
    owner: namespace,
    url: String(project.http_url_to_repo ?? project.web_url),
    default_branch: String(project.default_branch ?? "main"),
  };
}

/** Bare repositories (a HEAD file and an objects folder) directly in `folder`, with the branch their HEAD names. */
async function bareRepositoriesIn(folder: string): Promise<RepositoryRecord[]> {
  let entries: string[];
  let resolvedFolder: string;
  try {
    entries = (await readdir(folder)).sort();
    resolvedFolder = await realpath(folder);
  } catch {
    throw new BadRequestError(`The integration's folder ${folder} cannot be read`);
  }
  const found: RepositoryRecord[] = [];
  for (const entry of entries) {
    const path = join(folder, entry);
    try {
      // A symlink leading out of the folder is not one of its repositories.
      if (dirname(await realpath(path)) !== resolvedFolder) continue;
      if (!(await stat(join(path, "objects"))).isDirectory()) continue;
      const head = (await readFile(join(path, "HEAD"), "utf8")).trim();
      const branch = /^ref: refs\/heads\/(.+)$/.exec(head)?.[1] ?? "main";
      found.push({ id: found.length + 1, name: entry.replace(/\.git$/, ""), owner: "", url: path, default_branch: branch });
    } catch {
      // Not a bare repository.
    }
  }
  return found;
}
