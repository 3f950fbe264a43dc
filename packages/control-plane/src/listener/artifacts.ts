import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { buildSource } from "../build/build.js";
import type { AssignedRevision } from "../services/listener-api.js";

export interface Artifact {
  key: string;
  /** Absolute path of langgraph.json in the built project. */
  configFile: string;
}

type LogLine = (entry: { level: "info" | "error"; message: string }) => void;

const MARKER = ".berth-artifact.json";

/**
 * Built projects, keyed by what determines them (tarball, config path,
 * install and build commands): a revision that changes only secrets or
 * resources reuses its predecessor's build, and a redeploy reuses the
 * build of the revision it rolls back to.
 */
export class ArtifactStore {
  private readonly building = new Map<string, Promise<Artifact>>();

  constructor(private readonly dir: string) {}

  keyOf(revision: AssignedRevision): string | undefined {
    if (!revision.tarball_sha256) return undefined;
    const { graph_config_path: configPath } = revision.source_revision_config;
    const { install_command: install, build_command: build } = revision.source_config;
    return createHash("sha256")
      .update(JSON.stringify([revision.tarball_sha256, configPath, install ?? null, build ?? null]))
      .digest("hex")
      .slice(0, 32);
  }

  /** A finished build of that key, if this listener has one. */
  async find(key: string): Promise<Artifact | undefined> {
    const marker = join(this.dir, key, MARKER);
    if (!existsSync(marker)) return undefined;
    const { configFile } = JSON.parse(await readFile(marker, "utf8")) as { configFile: string };
    return { key, configFile: join(this.dir, key, configFile) };
  }

  /** Builds the revision's tarball (one build per key at a time); the marker is written last, so a half build is redone. */
  build(key: string, revision: AssignedRevision, tarball: string, cacheDir: string, log: LogLine, signal: AbortSignal): Promise<Artifact> {
    const running = this.building.get(key);
    if (running) return running;
    const promise = (async () => {
      const workDir = join(this.dir, key);
      await rm(workDir, { recursive: true, force: true });
      await mkdir(workDir, { recursive: true });
      const result = await buildSource({
        tarball,
        graphConfigPath: String(revision.source_revision_config.graph_config_path),
        installCommand: (revision.source_config.install_command as string | null) ?? null,
        buildCommand: (revision.source_config.build_command as string | null) ?? null,
        workDir,
        cacheDir,
        log,
        signal,
        // Graph modules may read their API keys at import: the check sees the revision's secrets.
        checkEnv: Object.fromEntries(revision.secrets.map(({ name, value }) => [name, value])),
      });
      await writeFile(join(workDir, MARKER), JSON.stringify({ configFile: relative(workDir, result.configFile) }));
      return { key, configFile: result.configFile };
    })().finally(() => this.building.delete(key));
    this.building.set(key, promise);
    return promise;
  }
}
