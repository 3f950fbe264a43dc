import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { explainFailure, GitFetchError, quote } from "./fetch-errors.js";
import type { GitSession } from "./git-environment.js";
import { runGit } from "./git-process.js";
import { describeRef, type RefTarget, type Source } from "./urls-and-refs.js";

// The cache of fetched repositories: one bare repository per normalized URL, reused across fetches, used by one
// fetch at a time within the process, and repaired when a crash left it locked or damaged.

/** A lock file in the cache older than this belongs to a git that crashed or was killed, never to a running fetch of ours. */
const STALE_LOCK_MS = 5 * 60_000;

/** The cache repository of `source` in `cacheDir`: named by a hash, so any URL makes a safe directory name. */
export function cacheRepository(cacheDir: string, source: Source): string {
  return join(resolve(cacheDir), createHash("sha256").update(source.cacheKey).digest("hex"));
}

/** The tail of each cache repository's queue of fetches. */
const cacheQueues = new Map<string, Promise<void>>();

/** Runs `task` once every earlier task of the same cache repository has finished, so two fetches never share it at once. */
export function serialized<T>(repo: string, task: () => Promise<T>): Promise<T> {
  const result = (cacheQueues.get(repo) ?? Promise.resolve()).then(task);
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  cacheQueues.set(repo, tail);
  void tail.then(() => {
    if (cacheQueues.get(repo) === tail) cacheQueues.delete(repo);
  });
  return result;
}

/** A failure that may come from a damaged cache rather than from the remote: worth one retry in a fresh cache. */
class CacheSuspect extends Error {}

export async function fetchIntoCache(repo: string, source: Source, target: RefTarget, session: GitSession): Promise<string> {
  try {
    await ensureCacheRepo(repo, session);
    return await fetchAndResolve(repo, source, target, session);
  } catch (error) {
    if (!(error instanceof CacheSuspect)) throw error;
    session.log("The repository cache looks damaged; starting it afresh");
    await rm(repo, { recursive: true, force: true });
    await ensureCacheRepo(repo, session);
    try {
      return await fetchAndResolve(repo, source, target, session);
    } catch (retryError) {
      throw retryError instanceof CacheSuspect ? new GitFetchError(retryError.message) : retryError;
    }
  }
}

/** Creates the bare cache repository unless it exists; made under a temporary name, so a crash never leaves half of one. */
async function ensureCacheRepo(repo: string, session: GitSession): Promise<void> {
  if (await isFile(join(repo, "HEAD"))) return;
  await rm(repo, { recursive: true, force: true });
  await mkdir(dirname(repo), { recursive: true });
  const partial = `${repo}.init-${randomBytes(4).toString("hex")}`;
  try {
    const result = await runGit(["init", "--bare", "--quiet", "--initial-branch=cache", partial], session.home, session);
    if (result.code !== 0) throw new GitFetchError(`Could not create the repository cache: ${quote(result.stderr)}`);
    await rename(partial, repo);
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

async function fetchAndResolve(repo: string, source: Source, target: RefTarget, session: GitSession): Promise<string> {
  await removeLockFiles(repo, STALE_LOCK_MS);
  // One local ref per remote ref, its name flattened so "a" and "a/b" never collide as file and directory.
  const localRef = `refs/berth/${target.remote.replaceAll("%", "%25").replaceAll("/", "%2F")}`;
  const fetch = await runGit(
    [
      "--git-dir=.",
      "fetch",
      "--depth=1",
      "--no-tags",
      "--no-write-fetch-head",
      "--no-recurse-submodules",
      "--",
      source.url,
      `+${target.remote}:${localRef}`,
    ],
    repo,
    session,
  );
  if (fetch.code !== 0) {
    const failure = explainFailure(fetch.stderr, {
      repository: source.display,
      ref: describeRef(target),
      credentialKind: session.credentialKind,
    });
    throw failure.fromRemote ? new GitFetchError(failure.message) : new CacheSuspect(failure.message);
  }
  const parsed = await runGit(["--git-dir=.", "rev-parse", "--verify", "--quiet", `${localRef}^{commit}`], repo, session);
  const sha = parsed.stdout.trim();
  if (parsed.code !== 0 || !/^[0-9a-f]{40}$/.test(sha)) {
    throw new CacheSuspect(`${describeRef(target)} of ${source.display} does not point to a commit`);
  }
  return sha;
}

/**
 * Makes `sha` (a commit of `target`'s history) present in the cache and
 * returns it: found there already, else fetched by id (one shallow commit;
 * protocol v2 servers allow that), else by deepening the ref's history to it
 * on servers that refuse unadvertised objects. A commit no longer reachable
 * from the ref there is an error.
 */
export async function fetchCommitIntoCache(
  repo: string,
  source: Source,
  target: RefTarget,
  sha: string,
  session: GitSession,
): Promise<string> {
  await ensureCacheRepo(repo, session);
  await removeLockFiles(repo, STALE_LOCK_MS);
  const present = () => runGit(["--git-dir=.", "cat-file", "-e", `${sha}^{commit}`], repo, session);
  if ((await present()).code === 0) return sha;
  const common = ["--git-dir=.", "fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules"];
  const byId = await runGit([...common, "--depth=1", "--", source.url, `+${sha}:refs/berth/commits/${sha}`], repo, session);
  if (byId.code === 0 && (await present()).code === 0) return sha;
  session.log(`${source.display} did not hand out commit ${sha} by its id; fetching the history of ${describeRef(target)}`);
  const localRef = `refs/berth/history/${target.remote.replaceAll("%", "%25").replaceAll("/", "%2F")}`;
  const shallow = await isFile(join(repo, "shallow"));
  const history = await runGit(
    [...common, ...(shallow ? ["--unshallow"] : []), "--", source.url, `+${target.remote}:${localRef}`],
    repo,
    session,
  );
  if (history.code !== 0) {
    const failure = explainFailure(history.stderr, {
      repository: source.display,
      ref: describeRef(target),
      credentialKind: session.credentialKind,
    });
    throw new GitFetchError(failure.message);
  }
  const reachable = await runGit(["--git-dir=.", "merge-base", "--is-ancestor", sha, localRef], repo, session);
  if (reachable.code !== 0) {
    throw new GitFetchError(`Commit ${sha} is no longer in the history of ${describeRef(target)} of ${source.display}`);
  }
  return sha;
}

/**
 * Removes lock files older than `olderThanMs` from the cache repository. A
 * git that crashed or was SIGKILLed leaves them behind, and every later fetch
 * would fail on them; a running fetch of this process cannot own one (fetches
 * are serialized) and none of ours runs longer than the fetch timeout.
 */
export async function removeLockFiles(repo: string, olderThanMs: number): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(repo, { recursive: true });
  } catch {
    return;
  }
  const now = Date.now();
  for (const entry of entries) {
    if (!entry.endsWith(".lock")) continue;
    const path = join(repo, entry);
    try {
      if (now - (await stat(path)).mtimeMs >= olderThanMs) await rm(path, { force: true });
    } catch {
      // Gone in the meantime.
    }
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
