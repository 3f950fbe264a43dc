import { createHash } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { buildImage, type ContainerEngine, type EngineLog, imageExists } from "../../engine/docker-engine.js";
import { packWithDockerfile } from "./build-context.js";
import { sharedBuild } from "./shared-builds.js";

/** The Berth install the runtime image carries: the repository's root with its installed dependencies. */
const BERTH_ROOT = fileURLToPath(new URL("../../../../../", import.meta.url));
const PACKAGES = ["agent-server", "graph-auth", "service-kit", "cli", "control-plane", "listener", "listener-protocol"];
/** Where Berth lives inside every image the container compute runs. */
export const BERTH_IN_IMAGE = "/opt/berth";

/**
 * The image every revision image starts from: the Node base image with this
 * Berth (its agent server is the entry point) at /opt/berth. Tagged by a hash
 * of Berth's sources and lockfile, so it is built once per Berth version and engine.
 */
export async function ensureRuntimeImage(engine: ContainerEngine, log: EngineLog): Promise<string> {
  const base = engine.baseImage;
  if (!(await imageExists(engine, base))) {
    throw new Error(
      `The Node base image ${base} is missing from the engine at ${engine.address}: make it once with scripts/node-base-image.sh (docs/containers.md)`,
    );
  }
  fingerprinted ??= fingerprint(base);
  const tag = `berth/agent-runtime:${await fingerprinted}`;
  if (await imageExists(engine, tag)) return tag;
  await sharedBuild(`${engine.address} ${tag}`, () => buildRuntimeImage(engine, base, tag, log));
  return tag;
}

/** The fingerprint of the Berth this process runs: computed once, as the code loaded does not change. */
let fingerprinted: Promise<string> | undefined;

async function buildRuntimeImage(engine: ContainerEngine, base: string, tag: string, log: EngineLog): Promise<void> {
  log({ level: "info", message: `Building the Berth runtime image ${tag} (once per Berth version)` });
  const dockerfile = `FROM ${base}\nCOPY . ${BERTH_IN_IMAGE}\nENV NODE_ENV=production\n`;
  const context = packWithDockerfile(
    BERTH_ROOT,
    ["package.json", "node_modules", ...PACKAGES.map((name) => `packages/${name}`)],
    dockerfile,
    // Tests and the caches tools keep under node_modules/.cache (the official CLI the tests install, among others) are not Berth.
    (path) => /^packages\/[^/]+\/test(\/|$)/.test(path) || /^node_modules\/\.cache(\/|$)/.test(path),
  );
  await buildImage(engine, context, { tag, labels: { "berth.managed": "runtime" }, log });
}

/** A hash of the base image's name, Berth's lockfile and its sources' names, sizes and times: cheap, and changes with any edit. */
async function fingerprint(base: string): Promise<string> {
  const hash = createHash("sha256")
    .update(base)
    .update(await readFile(join(BERTH_ROOT, "package-lock.json")));
  for (const name of PACKAGES) {
    const dir = join(BERTH_ROOT, "packages", name);
    for (const file of await filesUnder(dir)) {
      const info = await stat(file);
      hash.update(`${relative(BERTH_ROOT, file)}:${info.size}:${info.mtimeMs}\n`);
    }
  }
  return hash.digest("hex").slice(0, 16);
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && !entry.parentPath.includes("/test") && !entry.parentPath.includes("node_modules"))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}
