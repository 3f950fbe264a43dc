import { BadRequestError } from "@berth/service-kit";
import { isAbsolute, normalize, sep } from "node:path";
import type { IntegrationCreateInput } from "./inputs/integration.js";
import type { IntegrationKind, IntegrationRecord, RepositoryRecord } from "../storage/types.js";

import type { GitCredentials } from "../model/listener-protocol.js";

export type { GitCredentials };

/** The hosts with a repository-listing API (and their own webhook formats). */
export const HOSTED_KINDS: readonly IntegrationKind[] = ["github", "gitlab", "gitea"];

/** base_url's meaning per kind: a folder of bare repositories (local), a host (github, gitlab, gitea), an optional URL prefix (git). */
export function checkBaseUrl(kind: IntegrationKind, baseUrl: string | null | undefined): string | null {
  if (kind === "local") {
    if (!baseUrl || !isAbsolute(baseUrl)) {
      throw new BadRequestError("base_url: a local integration needs the absolute path of its folder of bare repositories");
    }
    return normalize(baseUrl);
  }
  if (!baseUrl) {
    if (HOSTED_KINDS.includes(kind)) throw new BadRequestError(`base_url: a ${kind} integration needs its host's URL`);
    return null;
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new BadRequestError(`base_url: ${baseUrl} is not a URL`);
  }
  if (!["https:", "http:", "ssh:"].includes(url.protocol)) throw new BadRequestError("base_url: only https, http and ssh URLs");
  return baseUrl.replace(/\/+$/, "");
}

export function credentialsOf(input: IntegrationCreateInput["credentials"]): GitCredentials | null {
  if (!input) return null;
  if ("token" in input) return { kind: "token", token: input.token, ...(input.username ? { username: input.username } : {}) };
  return { kind: "ssh", privateKey: input.ssh_private_key, knownHosts: input.known_hosts };
}

/** `url` or `url#branch` entries as repository records (owner and name from the URL's last two path parts). */
export function repositoriesOf(specs: readonly string[]): RepositoryRecord[] {
  return specs.map((spec, index) => {
    const hash = spec.lastIndexOf("#");
    const url = hash > 0 ? spec.slice(0, hash) : spec;
    const branch = hash > 0 ? spec.slice(hash + 1) : "main";
    const path = repositoryPath(url);
    if (!path) throw new BadRequestError(`repos[${index}]: ${url} is not a repository URL or absolute path`);
    const parts = path.split("/").filter(Boolean);
    return {
      id: index + 1,
      owner: parts.length > 1 ? parts[parts.length - 2]! : "",
      name: parts[parts.length - 1]!,
      url,
      default_branch: branch,
    };
  });
}

/** Compares repository URLs as hosts write them (with or without .git, a trailing slash, any case). */
export function sameRepository(a: string, b: string): boolean {
  return normalizeRepositoryUrl(a) === normalizeRepositoryUrl(b);
}

/**
 * Whether a deployment may use `repoUrl` through the integration: a
 * repository registered with it, or one under its base_url (a repository
 * of its host; for a local integration, inside its folder).
 */
export function integrationAllows(integration: IntegrationRecord, repoUrl: string): boolean {
  if (integration.repos.some((repo) => sameRepository(repo.url, repoUrl))) return true;
  const base = integration.base_url;
  if (!base) return false;
  if (integration.kind === "local") {
    const path = repoUrl.startsWith("file://") ? decodeURIComponent(new URL(repoUrl).pathname) : repoUrl;
    return isAbsolute(path) && normalize(path).startsWith(base.endsWith(sep) ? base : base + sep);
  }
  return normalizeRepositoryUrl(repoUrl).startsWith(`${normalizeRepositoryUrl(base)}/`);
}

function normalizeRepositoryUrl(url: string): string {
  return url
    .trim()
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")
    .toLowerCase();
}

function repositoryPath(url: string): string | undefined {
  if (isAbsolute(url)) return url.replace(/\.git$/, "");
  const scp = /^[\w.-]+@[\w.-]+:(.+)$/.exec(url);
  if (scp) return scp[1]!.replace(/\.git$/, "");
  try {
    const path = new URL(url).pathname.replace(/\.git$/, "");
    return path.split("/").filter(Boolean).length > 0 ? path : undefined;
  } catch {
    return undefined;
  }
}
