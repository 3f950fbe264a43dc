import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { buildImage, type ContainerEngine, removeImage } from "../../engine/docker-engine.js";
import { locateConfig } from "../config-file.js";
import { BuildError, type BuildLog } from "../errors.js";
import { INSTALL_SETTINGS, planInstall } from "../install.js";
import { safeUnpack } from "../safe-unpack.js";
import { packWithDockerfile } from "./build-context.js";
import { checkImageGraphs } from "./image-graph-check.js";
import { checkNodeVersion, dockerfileLinesOf, revisionDockerfile } from "./dockerfile.js";
import { ensureRuntimeImage } from "./runtime-image.js";

export interface RevisionImageRequest {
  tarball: string;
  graphConfigPath: string;
  installCommand?: string | null;
  buildCommand?: string | null;
  /** An empty directory: the unpacked source, then the build context. */
  workDir: string;
  tag: string;
  labels: Record<string, string>;
  log: BuildLog;
  signal?: AbortSignal;
  limits?: { maxBytes?: number; maxEntries?: number };
  /** The graph check's environment: graph modules may read their API keys at import. */
  checkEnv?: Record<string, string>;
}

export interface RevisionImage {
  tag: string;
  /** The engine's image id (sha256:…): the digest recorded for the revision. */
  imageId: string;
  durationMs: number;
}

/**
 * Builds an `internal_source` revision into an image through the engine:
 * unpack (refusing unsafe archives) → find langgraph.json → a Dockerfile
 * from it (see dockerfile.ts) → build → `berth check` in the image. The install and build commands run in
 * the engine's build containers, never on the listener's machine.
 */
export async function buildRevisionImage(engine: ContainerEngine, request: RevisionImageRequest): Promise<RevisionImage> {
  const started = Date.now();
  const { log, signal, workDir } = request;
  log({ level: "info", message: "==> Unpacking the source tarball" });
  await safeUnpack(request.tarball, workDir, request.limits ?? {}, signal);
  const configFile = await locateConfig(workDir, request.graphConfigPath);
  const config = await readConfig(configFile);
  checkNodeVersion(config, process.versions.node.split(".")[0]);
  const install = planInstall(workDir, request.installCommand);
  const installInputs = ["package.json", install?.lockfile, ...INSTALL_SETTINGS].filter(
    (name): name is string => name !== undefined && existsSync(join(workDir, name)),
  );
  log({ level: "info", message: "==> Preparing the Berth runtime image" });
  const runtime = await ensureRuntimeImage(engine, log);
  const configPath = relative(workDir, configFile).split(sep).join("/");
  const dockerfile = revisionDockerfile({
    from: runtime,
    configPath,
    configDir: dirname(configPath),
    installInputs,
    install,
    buildCommand: request.buildCommand,
    extraLines: dockerfileLinesOf(config),
  });
  log({ level: "info", message: `==> Building the image ${request.tag}` });
  for (const line of dockerfile.trimEnd().split("\n")) log({ level: "info", message: `Dockerfile: ${line}` });
  // Installed folders from the tarball never enter the image: the install in the image makes its own.
  const context = packWithDockerfile(workDir, undefined, dockerfile, (path) => /(^|\/)(node_modules|\.git)(\/|$)/.test(path));
  let imageId: string;
  try {
    imageId = await buildImage(engine, context, { tag: request.tag, labels: request.labels, log, signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new BuildError(`The image build failed: ${(error as Error).message}`);
  }
  try {
    await checkImageGraphs(engine, {
      image: request.tag,
      configFile: `/app/${configPath}`,
      env: request.checkEnv ?? {},
      labels: { ...request.labels, "berth.managed": "graph-check" },
      log,
    });
  } catch (error) {
    // The image does not load: nothing may run it.
    await removeImage(engine, request.tag, { force: false }).catch(() => {});
    throw error;
  }
  const durationMs = Date.now() - started;
  log({ level: "info", message: `Built ${request.tag} (${imageId.slice(0, 19)}) in ${(durationMs / 1000).toFixed(1)} s` });
  return { tag: request.tag, imageId, durationMs };
}

async function readConfig(configFile: string): Promise<Record<string, unknown>> {
  try {
    const parsed = JSON.parse(await readFile(configFile, "utf8")) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch (error) {
    throw new BuildError(`langgraph.json is not valid JSON: ${(error as Error).message}`);
  }
  throw new BuildError("langgraph.json must hold a JSON object");
}
