import type { AssignedRevision } from "@berth/listener-protocol";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { BuildError } from "../build/build.js";
import { type FetchedCommit, fetchRepository, GitFetchError } from "../build/git/fetch.js";
import type { ArtifactStore } from "./artifacts.js";
import type { ControlPlaneLink } from "./link.js";
import { repositoryOf } from "./revision-spec.js";
import { Abandoned, type LogWriter, type RevisionWork } from "./revision-work.js";

/** Where a placement's builds are found and made: built projects, or images. */
export interface Builds<Build> {
  /** What the BUILDING move says for `what` (a commit, the uploaded source). */
  building(what: string): string;
  /** A finished build of the key, when there is one. */
  find(key: string, log: LogWriter): Promise<Build | undefined>;
  build(key: string, revision: AssignedRevision, tarball: string, log: LogWriter, signal: AbortSignal): Promise<Build>;
}

/** How building a revision's source ended. */
export type BuildOutcome<Build> =
  | { kind: "built"; build: Build; key: string; reused: boolean }
  /** BUILD_FAILED, with the reason logged. */
  | { kind: "failed" }
  /** BUILD_FAILED: the revision has no uploaded source tarball. */
  | { kind: "no-source" };

export interface RevisionPreparationOptions {
  link: ControlPlaneLink;
  /** Build keys (and whose build it is). */
  artifacts: ArtifactStore;
  dirs: { sources: string; gitCache: string };
}

/**
 * What a built revision needs before it can start: its source fetched (an
 * upload, or a repository at a ref) and built, or found built already.
 */
export class RevisionPreparation {
  constructor(private readonly options: RevisionPreparationOptions) {}

  /**
   * Builds the revision's source (or finds its build) with `builds`, moving it
   * through AWAITING_BUILD and BUILDING to AWAITING_DEPLOY.
   */
  async buildSource<Build>(work: RevisionWork, builds: Builds<Build>): Promise<BuildOutcome<Build>> {
    const { revision, buildLog, move, signal } = work;
    const { link, artifacts, dirs } = this.options;
    const tarball = join(dirs.sources, `${revision.id}.tar.gz`);
    await mkdir(dirs.sources, { recursive: true });
    // A rollback serves its commit: the build of that commit when it is still here, else that commit fetched and built.
    const pinned = pinnedCommitOf(revision);
    const pinnedKey = pinned && artifacts.keyOf({ ...revision, tarball_sha256: `git:${pinned}` });
    let found = pinnedKey ? await builds.find(pinnedKey, buildLog) : undefined;
    // A repository is fetched first: its commit, not a tarball's hash, says which build it is.
    let fetched: FetchedCommit | undefined = found && pinned ? { sha: pinned } : undefined;
    if (revision.source === "repo_host" && !fetched) {
      const commit = await this.fetchRepository(work, tarball, pinned);
      if (!commit) return { kind: "failed" };
      fetched = commit;
    }
    const facts = fetched && { repo_commit_sha: fetched.sha };
    const key = artifacts.keyOf(fetched ? { ...revision, tarball_sha256: `git:${fetched.sha}` } : revision);
    if (!key) {
      await move("BUILD_FAILED", "The revision has no uploaded source tarball");
      return { kind: "no-source" };
    }
    found ??= await builds.find(key, buildLog);
    let build: Build;
    if (found) {
      build = found;
      buildLog({ level: "info", message: `Reusing the existing build ${key}: no build needed` });
    } else {
      if (!fetched) await move("AWAITING_BUILD", "Waiting for the build to start");
      const what = fetched ? `commit ${fetched.sha.slice(0, 12)}` : "the uploaded source";
      await move("BUILDING", builds.building(what), undefined, facts);
      const started = Date.now();
      try {
        if (!fetched) await link.fetchSource(revision.id, tarball);
        build = await builds.build(key, revision, tarball, buildLog, signal);
      } catch (error) {
        await rm(tarball, { force: true });
        if (signal.aborted) throw new Abandoned();
        const reason = error instanceof BuildError ? error.message : `Build failed: ${(error as Error).message}`;
        buildLog({ level: "error", message: reason });
        await move("BUILD_FAILED", reason);
        return { kind: "failed" };
      }
      buildLog({ level: "info", message: `Built in ${((Date.now() - started) / 1000).toFixed(1)} s` });
    }
    await rm(tarball, { force: true });
    const reused = found !== undefined;
    await move("AWAITING_DEPLOY", reused ? "Reusing an existing build of the same source: no build" : "Built", undefined, facts);
    return { kind: "built", build, key, reused };
  }

  /**
   * Fetches a repo_host revision's ref (shallow, through the listener's
   * per-repository cache) into `tarball`; the revision waits in
   * AWAITING_BUILD meanwhile. Null after BUILD_FAILED with the reason.
   */
  private async fetchRepository(
    { revision, buildLog, move, signal }: RevisionWork,
    tarball: string,
    pinned: string | undefined,
  ): Promise<FetchedCommit | null> {
    const repository = revision.spec.repository;
    if (!repository) {
      await move("BUILD_FAILED", "The deployment's integration no longer exists: its repository cannot be fetched");
      return null;
    }
    const at = pinned ? `commit ${pinned} (of ${repository.ref})` : repository.ref;
    await move("AWAITING_BUILD", `Fetching ${repository.url} at ${at}`);
    buildLog({ level: "info", message: `Fetching ${repository.url} at ${at}` });
    try {
      const commit = await fetchRepository({
        ...repositoryOf(repository),
        commit: pinned,
        cacheDir: this.options.dirs.gitCache,
        tarball,
        signal,
        log: (line) => buildLog({ level: "info", message: line }),
      });
      if (!pinned) buildLog({ level: "info", message: `${repository.ref} is at ${commit.sha}` });
      return commit;
    } catch (error) {
      if (signal.aborted) throw new Abandoned();
      const reason =
        error instanceof GitFetchError ? error.message : `Fetching the repository failed: ${(error as Error).message}`;
      buildLog({ level: "error", message: reason });
      await move("BUILD_FAILED", reason);
      return null;
    }
  }
}

/**
 * The commit a redeploy of a repo_host revision serves (the one that revision
 * was fetched at); undefined for every other revision, which fetches its ref's head.
 */
function pinnedCommitOf(revision: AssignedRevision): string | undefined {
  const sha = revision.spec.repo_commit_sha;
  const pinned = revision.spec.source === "repo_host" && revision.artifact_revision_id !== null;
  return pinned && sha !== null && /^[0-9a-f]{40}$/.test(sha) ? sha : undefined;
}
