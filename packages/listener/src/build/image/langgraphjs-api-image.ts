import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildImage, type ContainerEngine, type EngineLog } from "../../engine/docker-engine.js";
import { packWithDockerfile } from "./build-context.js";
import { CONTAINER_PORT, serveCommand } from "./dockerfile.js";
import { ensureRuntimeImage } from "./runtime-image.js";

/**
 * The base image the official CLI's local `deploy` builds FROM when given
 * `--base-image`: named after this machine's Node major, as the official
 * `langchain/langgraphjs-api:<node>` images are.
 */
export function langGraphJsApiImageTag(): string {
  return `berth/langgraphjs-api:${process.versions.node.split(".")[0]}`;
}

/**
 * Berth's runtime image with the official image's contract: the CLI's
 * Dockerfile copies the project to /deps/<name>, installs it there, sets
 * LANGSERVE_GRAPHS (and LANGGRAPH_STORE, ...) and makes that folder the
 * working directory, so the entry point serves the working directory, which
 * `berth serve` reads from those variables when it holds no langgraph.json.
 */
export async function buildLangGraphJsApiImage(engine: ContainerEngine, log: EngineLog): Promise<string> {
  const runtime = await ensureRuntimeImage(engine, log);
  const tag = langGraphJsApiImageTag();
  const dockerfile = [
    `FROM ${runtime}`,
    `ENV PORT=${CONTAINER_PORT}`,
    "WORKDIR /deps",
    `EXPOSE ${CONTAINER_PORT}`,
    `CMD ${JSON.stringify(serveCommand("."))}`,
    "",
  ].join("\n");
  const empty = await mkdtemp(join(tmpdir(), "berth-langgraphjs-api-"));
  try {
    await buildImage(engine, packWithDockerfile(empty, [], dockerfile), {
      tag,
      labels: { "berth.managed": "langgraphjs-api" },
      log,
    });
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
  return tag;
}
