import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { GitCredentials } from "@berth/listener-protocol";
import { explainFailure, GitFetchError, quote } from "./fetch-errors.js";
import { type GitSession, withSession } from "./git-environment.js";
import { runGit } from "./git-process.js";
import { cacheRepository, fetchCommitIntoCache, fetchIntoCache, removeLockFiles, serialized } from "./repository-cache.js";
import { checkCredentials, describeRef, parseRef, parseSource } from "./urls-and-refs.js";

// Fetching a git repository at a ref into a tarball: the entry the rest of the control plane imports.

export type { GitCredentials };
export { GitFetchError };
export { FETCH_TIMEOUT_MS } from "./git-environment.js";

export interface RepoFetch {
  /** https://…, http://…, ssh://…, git://…, user@host:path, or an absolute path / file:// URL (only with allowLocal). */
  url: string;
  /** A branch by bare name ("main") or as "refs/heads/main", or a tag as "refs/tags/v1". */
  ref: string;
  /** A commit the ref pointed at once, to fetch instead of its head (a rollback to an earlier revision's commit). */
  commit?: string;
  credentials?: GitCredentials;
  /** Local paths and file:// URLs are refused unless true. */
  allowLocal?: boolean;
  /** Owned by the caller; holds one bare repository per normalized URL, reused across fetches. */
  cacheDir: string;
  /** Where the .tar.gz of the tree at the fetched commit is written (files at its root, no .git). */
  tarball: string;
  /** Kills git when aborted. */
  signal?: AbortSignal;
  /** Progress lines for a build log; credentials are scrubbed from them. */
  log?: (line: string) => void;
}

export interface FetchedCommit {
  /** The 40-hex sha of the commit the tarball was made from. */
  sha: string;
}

/**
 * Fetches `ref` of the repository at `url` into the cache (one shallow commit)
 * and writes a gzip tarball of its tree to `tarball`. Fetches of one cache
 * repository are serialized within the process; a cache left damaged or
 * locked by a crash is repaired on the way.
 */
export async function fetchRepository(request: RepoFetch): Promise<FetchedCommit> {
  const source = parseSource(request.url, request.allowLocal === true);
  const target = parseRef(request.ref);
  checkCredentials(source, request.credentials);
  const repo = cacheRepository(request.cacheDir, source);
  const tarball = resolve(request.tarball);
  const commit = request.commit;
  if (commit !== undefined && !/^[0-9a-f]{40}$/.test(commit)) throw new GitFetchError(`"${commit}" is not a commit id`);
  const what = commit
    ? `Fetching commit ${commit} of ${describeRef(target)} from ${source.display}`
    : `Fetching ${describeRef(target)} from ${source.display}`;

  return serialized(repo, () =>
    withSession(request, source, what, async (session) => {
      session.log(what);
      try {
        const sha = commit
          ? await fetchCommitIntoCache(repo, source, target, commit, session)
          : await fetchIntoCache(repo, source, target, session);
        session.log(`Fetched commit ${sha}`);
        await writeTarball(repo, sha, tarball, session);
        return { sha };
      } finally {
        // A git we killed may have left lock files; nothing else of ours runs on this repository now.
        if (session.signal.aborted) await removeLockFiles(repo, 0);
      }
    }),
  );
}

/** The commit a ref points at on the remote now (git ls-remote), or undefined when the ref does not exist. */
export async function remoteHead(
  request: Pick<RepoFetch, "url" | "ref" | "credentials" | "allowLocal" | "signal">,
): Promise<string | undefined> {
  const source = parseSource(request.url, request.allowLocal === true);
  const target = parseRef(request.ref);
  checkCredentials(source, request.credentials);
  const what = `Looking up ${describeRef(target)} of ${source.display}`;

  return withSession(request, source, what, async (session) => {
    // The peeled pattern makes git list the commit an annotated tag points at.
    const result = await runGit(["ls-remote", "--", source.url, target.remote, `${target.remote}^{}`], session.home, session);
    if (result.code !== 0) {
      const failure = explainFailure(result.stderr, {
        repository: source.display,
        ref: describeRef(target),
        credentialKind: session.credentialKind,
      });
      throw new GitFetchError(failure.message);
    }
    const shas = new Map<string, string>();
    for (const line of result.stdout.split("\n")) {
      const [sha, name] = line.split("\t");
      if (name !== undefined && /^[0-9a-f]{40}$/.test(sha)) shas.set(name, sha);
    }
    return shas.get(`${target.remote}^{}`) ?? shas.get(target.remote);
  });
}

async function writeTarball(repo: string, sha: string, tarball: string, session: GitSession): Promise<void> {
  await mkdir(dirname(tarball), { recursive: true });
  // Written beside the target and renamed, so the build never sees half a tarball.
  const partial = `${tarball}.partial-${randomBytes(4).toString("hex")}`;
  try {
    const result = await runGit(["--git-dir=.", "archive", "--format=tar.gz", `--output=${partial}`, sha], repo, session);
    if (result.code !== 0) throw new GitFetchError(`Could not pack commit ${sha} into a tarball: ${quote(result.stderr)}`);
    await rename(partial, tarball);
  } finally {
    await rm(partial, { force: true });
  }
  const { size } = await stat(tarball);
  session.log(`Packed the tree of ${sha} into a tarball (${size} bytes)`);
}
