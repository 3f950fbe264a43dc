import { BuildError } from "../errors.js";
import type { InstallPlan } from "../install.js";

export interface DockerfileInput {
  /** The runtime image (Node and Berth). */
  from: string;
  /** langgraph.json's path relative to the project root, with forward slashes. */
  configPath: string;
  /** The folder holding it, relative to the root ("." at the root). */
  configDir: string;
  /** Project files the install reads (package.json, the lockfile, the package manager's settings), relative to the root. */
  installInputs: string[];
  install?: InstallPlan;
  buildCommand?: string | null;
  /** langgraph.json's `dockerfile_lines`, appended as they are. */
  extraLines: string[];
}

/** The port the agent server listens on inside a container. */
export const CONTAINER_PORT = 8000;
/** The deployment's persistent data (its SQLite database), a volume. */
export const CONTAINER_DATA_DIR = "/data";

/**
 * The Dockerfile of a revision image. The dependency layer comes first and
 * depends only on the install's inputs, so a revision with an unchanged
 * lockfile reuses it from the engine's cache; then the sources and the build
 * command. Berth's agent server is the entry point, the graph configuration baked in.
 */
export function revisionDockerfile(input: DockerfileInput): string {
  const lines = [`FROM ${input.from}`, "WORKDIR /app"];
  if (input.install) {
    if (input.installInputs.length > 0) lines.push(`COPY ${JSON.stringify([...input.installInputs, "./"])}`);
    lines.push(`RUN ${input.install.command}`);
  }
  lines.push("COPY . .");
  const build = input.buildCommand?.trim();
  if (build) lines.push(`RUN cd ${JSON.stringify(input.configDir)} && ${build}`);
  lines.push(...input.extraLines);
  lines.push(
    `ENV BERTH_GRAPH_CONFIG=/app/${input.configPath} PORT=${CONTAINER_PORT}`,
    `EXPOSE ${CONTAINER_PORT}`,
    `CMD ${JSON.stringify(serveCommand(`/app/${input.configPath}`))}`,
  );
  return `${lines.join("\n")}\n`;
}

/** `berth serve` of the image's graph configuration, on $PORT (8000 unless the platform sets it), with its data in the data volume. */
export function serveCommand(configFile: string): string[] {
  return [
    "node",
    "/opt/berth/packages/cli/bin/berth.mjs",
    "serve",
    configFile,
    "--host",
    "0.0.0.0",
    "--data-dir",
    CONTAINER_DATA_DIR,
  ];
}

/** `dockerfile_lines` of langgraph.json: a list of strings, each one Dockerfile line. */
export function dockerfileLinesOf(config: Record<string, unknown>): string[] {
  const lines = config.dockerfile_lines;
  if (lines === undefined || lines === null) return [];
  if (!Array.isArray(lines) || !lines.every((line) => typeof line === "string"))
    throw new BuildError("langgraph.json: dockerfile_lines must be a list of strings (one Dockerfile line each)");
  return lines.flatMap((line) => line.split("\n")).filter((line) => line.trim() !== "");
}

/** `node_version` of langgraph.json must be the base image's major version: one Node per machine (docs/containers.md). */
export function checkNodeVersion(config: Record<string, unknown>, available: string): void {
  const wanted = config.node_version;
  if (wanted === undefined || wanted === null) return;
  const major = String(wanted).split(".")[0];
  if (major !== available)
    throw new BuildError(
      `langgraph.json asks for node_version ${String(wanted)}, but this listener's base image has Node ${available}`,
    );
}
