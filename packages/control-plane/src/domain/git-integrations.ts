import { BadRequestError } from "@berth/service-kit";
import { realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { isAbsolute, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { IntegrationCreateInput } from "./inputs/integration.js";
import type { IntegrationKind, IntegrationRecord, RepositoryRecord } from "../storage/types.js";

import type { GitCredentials } from "@berth/listener-protocol";

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

/**
 * A local integration's folder (or a repository registered with it) as the
 * listener's disk resolves it, `..` and symlinks followed: only when that is
 * one of `roots` (resolved too) or inside one. 400 otherwise, and for a path
 * that does not exist.
 */
export async function localPathUnderRoots(path: string, roots: readonly string[], field: string): Promise<string> {
  if (roots.length === 0) {
    throw new BadRequestError(
      `${field}: no folder is open to local integrations (the operator lists them in BERTH_LOCAL_GIT_ROOTS)`,
    );
  }
  const resolved = await resolvedLocalPath(path, field);
  for (const root of roots) {
    const resolvedRoot = await realpath(root).catch(() => undefined);
    if (resolvedRoot && isInside(resolved, resolvedRoot)) return resolved;
  }
  throw new BadRequestError(`${field}: ${path} is outside the folders open to local integrations (BERTH_LOCAL_GIT_ROOTS)`);
}

/** An absolute path (or file:// URL) with `..` and symlinks resolved; 400 when it does not exist. */
export async function resolvedLocalPath(path: string, field: string): Promise<string> {
  const local = path.startsWith("file://") ? fileURLToPath(path) : path;
  if (!isAbsolute(local)) throw new BadRequestError(`${field}: ${path} is not an absolute path`);
  try {
    return await realpath(local);
  } catch {
    throw new BadRequestError(`${field}: ${path} does not exist on the listener's machine`);
  }
}

/** `path` is `folder` or inside it (both absolute and normalized). */
function isInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
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
    if (!isAbsolute(path)) return false;
    // Resolved on disk: a symlink in the folder must not lead out of it.
    const resolved = realpathOrUndefined(normalize(path));
    const folder = realpathOrUndefined(base);
    return resolved !== undefined && folder !== undefined && resolved !== folder && isInside(resolved, folder);
  }
  return normalizeRepositoryUrl(repoUrl).startsWith(`${normalizeRepositoryUrl(base)}/`);
}

function realpathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
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
