import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { buildSource, type GraphChecker } from "../build/build.js";
import type { Isolation, Owner } from "../sandbox/isolation.js";
import type { AssignedRevision } from "@berth/listener-protocol";
import { resourcesOf, secretEnvOf } from "./revision-spec.js";

export interface Artifact {
  key: string;
  /** Absolute path of langgraph.json in the built project. */
  configFile: string;
}

type LogLine = (entry: { level: "info" | "error"; message: string }) => void;

const MARKER = ".berth-artifact.json";
/** Builds of the layout before builds were per deployment (`<artifacts>/<key>`), shared by every workspace. */
const SHARED_BUILD = /^[0-9a-f]{32}$/;
/** A workspace's directory in the install cache. */
const WORKSPACE_CACHE_PREFIX = "ws-";

export interface ArtifactStoreOptions {
  /** Whose revision it is; always known for the revisions of the listener's assignments. */
  ownerOf(revisionId: string): Owner | undefined;
  isolation: Isolation;
}

/**
 * Built projects, one directory per deployment (`<dir>/<deployment id>/<key>`),
 * keyed by what determines them (workspace, deployment, tarball, config path,
 * install and build commands): a revision that changes only secrets or
 * resources reuses its predecessor's build, and a redeploy reuses the build of
 * the revision it rolls back to. Builds are never shared between deployments:
 * each belongs to its deployment's sandbox user, and no other may read it.
 */
export class ArtifactStore {
  private readonly building = new Map<string, Promise<Artifact>>();

  constructor(
    private readonly dir: string,
    private readonly options: ArtifactStoreOptions,
  ) {}

  keyOf(revision: AssignedRevision): string | undefined {
    return revision.tarball_sha256 ? buildKeyOf(this.ownerOf(revision), revision, revision.tarball_sha256) : undefined;
  }

  /** A finished build of that key, if this listener has one. */
  async find(key: string): Promise<Artifact | undefined> {
    const marker = join(this.dir, key, MARKER);
    if (!existsSync(marker)) return undefined;
    const { configFile } = JSON.parse(await readFile(marker, "utf8")) as { configFile: string };
    return { key, configFile: join(this.dir, key, configFile) };
  }

  /**
   * Builds the revision's tarball (one build per key at a time); the marker is
   * written last, so a half build is redone. The install cache is the
   * workspace's own (`<cacheDir>/ws-<hash of its id>`): an install script of
   * one workspace can never plant code in another's builds. `checkGraphs`
   * replaces the `berth check` of the last step (see build.ts).
   */
  build(
    key: string,
    revision: AssignedRevision,
    tarball: string,
    cacheDir: string,
    log: LogLine,
    signal: AbortSignal,
    checkGraphs?: GraphChecker,
  ): Promise<Artifact> {
    const running = this.building.get(key);
    if (running) return running;
    const promise = (async () => {
      const owner = this.ownerOf(revision);
      const workDir = join(this.dir, key);
      await rm(workDir, { recursive: true, force: true });
      await mkdir(dirname(workDir), { recursive: true, mode: 0o700 });
      await mkdir(workDir, { mode: 0o700 });
      const sandbox = await this.options.isolation.forBuild(owner, workDir, resourcesOf(revision));
      const workspaceCache = join(
        cacheDir,
        WORKSPACE_CACHE_PREFIX + createHash("sha256").update(owner.tenantId).digest("hex").slice(0, 32),
      );
      await mkdir(workspaceCache, { recursive: true, mode: 0o700 });
      const result = await buildSource({
        tarball,
        graphConfigPath: String(revision.spec.build.graph_config_path),
        installCommand: revision.spec.build.install_command,
        buildCommand: revision.spec.build.build_command,
        workDir,
        cacheDir: workspaceCache,
        sandbox,
        log,
        signal,
        // Graph modules may read their API keys at import: the check sees the revision's secrets.
        checkEnv: secretEnvOf(revision),
        checkGraphs,
      });
      await writeFile(join(workDir, MARKER), JSON.stringify({ configFile: relative(workDir, result.configFile) }));
      return { key, configFile: result.configFile };
    })().finally(() => this.building.delete(key));
    this.building.set(key, promise);
    return promise;
  }

  /** Removes a deployment's builds (it was deleted, or moved to another listener). */
  async forget(deploymentId: string): Promise<void> {
    await rm(join(this.dir, deploymentId), { recursive: true, force: true });
  }

  private ownerOf(revision: AssignedRevision): Owner {
    const owner = this.options.ownerOf(revision.id);
    if (!owner) throw new Error(`revision ${revision.id} belongs to no deployment this listener knows`);
    return owner;
  }
}

/**
 * The key of a revision's build (`<deployment id>/<hash>`): what determines
 * it (`tarballSha256`: the upload's hash, or `git:<commit>`), so an unchanged
 * source keeps its key. Image tags end with the hash.
 */
export function buildKeyOf(owner: Owner, revision: AssignedRevision, tarballSha256: string): string {
  const { graph_config_path: configPath, install_command: install, build_command: build } = revision.spec.build;
  const hash = createHash("sha256")
    .update(JSON.stringify([owner.tenantId, owner.deploymentId, tarballSha256, configPath, install, build]))
    .digest("hex")
    .slice(0, 32);
  return `${owner.deploymentId}/${hash}`;
}

/**
 * Removes what the layout before per-deployment builds and per-workspace
 * install caches left: builds shared across workspaces, and one install
 * cache (with the package managers' caches) shared by all.
 */
export async function removeSharedBuilds(artifactsDir: string, installCacheDir: string): Promise<void> {
  const shared = async (dir: string, isShared: (name: string) => boolean) => {
    for (const name of await readdir(dir).catch(() => [])) {
      if (isShared(name)) await rm(join(dir, name), { recursive: true, force: true });
    }
  };
  await shared(artifactsDir, (name) => SHARED_BUILD.test(name));
  await shared(installCacheDir, (name) => !name.startsWith(WORKSPACE_CACHE_PREFIX));
}
