import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { BuildError, type GraphChecker } from "../build/build.js";
import { type FetchedCommit, fetchRepository, GitFetchError } from "../build/git/fetch.js";
import type { AssignedRevision } from "@berth/listener-protocol";
import { repositoryOf } from "./revision-spec.js";
import { Abandoned, type LogWriter, type Move, type Prepared, type RunnerContext } from "./revision-work.js";

/**
 * What a revision needs before it can start: its source fetched (an upload,
 * or a repository at a ref) and built into a project or an image, or found
 * built already; an external image pulled.
 */
export class RevisionPreparation {
  constructor(
    private readonly deploymentId: string,
    private readonly context: RunnerContext,
  ) {}

  /**
   * Builds the revision's uploaded source (or finds its build), moving it
   * through AWAITING_BUILD and BUILDING to AWAITING_DEPLOY. Undefined: it
   * failed without a tarball; null: the build failed (BUILD_FAILED, logged).
   * `checkGraphs` replaces the build's `berth check` (local compute: see server-graph-check.ts).
   */
  async buildSource(
    revision: AssignedRevision,
    buildLog: LogWriter,
    move: Move,
    signal: AbortSignal,
    checkGraphs?: GraphChecker,
  ): Promise<Prepared | null | undefined> {
    const { link, artifacts, dirs } = this.context;
    const tarball = join(dirs.sources, `${revision.id}.tar.gz`);
    await mkdir(dirs.sources, { recursive: true });
    // A rollback serves its commit: the build of that commit when it is still here, else that commit fetched and built.
    const pinned = pinnedCommitOf(revision);
    const pinnedKey = pinned && artifacts.keyOf({ ...revision, tarball_sha256: `git:${pinned}` });
    let prepared = pinnedKey ? await this.findBuild(pinnedKey, buildLog) : undefined;
    // A repository is fetched first: its commit, not a tarball's hash, says which build it is.
    let fetched: FetchedCommit | undefined = prepared && pinned ? { sha: pinned } : undefined;
    if (revision.source === "repo_host" && !fetched) {
      const commit = await this.fetchRepository(revision, tarball, buildLog, move, signal, pinned);
      if (!commit) return null;
      fetched = commit;
    }
    const facts = fetched && { repo_commit_sha: fetched.sha };
    const key = artifacts.keyOf(fetched ? { ...revision, tarball_sha256: `git:${fetched.sha}` } : revision);
    if (!key) return void (await move("BUILD_FAILED", "The revision has no uploaded source tarball"));
    prepared ??= await this.findBuild(key, buildLog);
    if (prepared) {
      buildLog({ level: "info", message: `Reusing the existing build ${key}: no build needed` });
    } else {
      if (!fetched) await move("AWAITING_BUILD", "Waiting for the build to start");
      const what = fetched ? `commit ${fetched.sha.slice(0, 12)}` : "the uploaded source";
      await move("BUILDING", this.context.images ? `Building ${what} into an image` : `Building ${what}`, undefined, facts);
      const started = Date.now();
      try {
        if (!fetched) await link.fetchSource(revision.id, tarball);
        prepared = await this.build(key, revision, tarball, buildLog, signal, checkGraphs);
      } catch (error) {
        await rm(tarball, { force: true });
        if (signal.aborted) throw new Abandoned();
        const reason = error instanceof BuildError ? error.message : `Build failed: ${(error as Error).message}`;
        buildLog({ level: "error", message: reason });
        await move("BUILD_FAILED", reason);
        return null;
      }
      buildLog({ level: "info", message: `Built in ${((Date.now() - started) / 1000).toFixed(1)} s` });
    }
    await rm(tarball, { force: true });
    const message = prepared.reused ? "Reusing an existing build of the same source: no build" : "Built";
    await move("AWAITING_DEPLOY", message, undefined, facts);
    return { ...prepared, key };
  }

  /**
   * Fetches a repo_host revision's ref (shallow, through the listener's
   * per-repository cache) into `tarball`; the revision waits in
   * AWAITING_BUILD meanwhile. Null after BUILD_FAILED with the reason.
   */
  private async fetchRepository(
    revision: AssignedRevision,
    tarball: string,
    buildLog: LogWriter,
    move: Move,
    signal: AbortSignal,
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
        cacheDir: this.context.dirs.gitCache,
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

  /** Pulls an external image (with its image_pull_secrets) and resolves its secret_references, from the listener's secret source. */
  async pullExternal(prepared: Prepared, revision: AssignedRevision): Promise<Record<string, string>> {
    const { images, secrets } = this.context;
    const image = prepared.image!;
    const log = this.context.logs.writer(this.deploymentId, revision.id, "deploy");
    const environment = await secrets.environment(revision.spec.secret_references);
    log({ level: "info", message: `Pulling ${image}` });
    // An internal_image comes from the platform's registry, with a pull token scoped to this deployment.
    const auth = revision.registry_auth ?? (await secrets.registryCredentials(revision.spec.resources.image_pull_secrets, image));
    await images!.pull(image, auth, log);
    return environment;
  }

  /** A finished build of the key: a built project, or an image on a container listener (or in a cluster listener's registry). */
  private async findBuild(key: string, log: LogWriter): Promise<Prepared | undefined> {
    const { images, artifacts, clusterImages } = this.context;
    const pushed = await clusterImages?.findPushed(this.deploymentId, key, log);
    if (pushed) return { configFile: "", image: pushed.ref, reused: true, pushed };
    if (images) {
      const image = await images.find(this.deploymentId, key);
      return image ? { configFile: "", image, reused: true } : undefined;
    }
    const artifact = await artifacts.find(key);
    return artifact && { configFile: artifact.configFile, reused: true };
  }

  private async build(
    key: string,
    revision: AssignedRevision,
    tarball: string,
    log: LogWriter,
    signal: AbortSignal,
    checkGraphs?: GraphChecker,
  ): Promise<Prepared> {
    const { images, artifacts, dirs } = this.context;
    if (images) {
      const image = await images.build(this.deploymentId, key, revision, tarball, log, signal);
      return { configFile: "", image, reused: false };
    }
    const artifact = await artifacts.build(key, revision, tarball, dirs.installCache, log, signal, checkGraphs);
    return { configFile: artifact.configFile, reused: false };
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
