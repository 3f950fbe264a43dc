import type Docker from "dockerode";
import type { ContainerEngine } from "../../engine/docker-engine.js";
import { demultiplexed, imageExists, pullImage } from "../../engine/docker-engine.js";
import { DeployError } from "../types.js";
import { BOUNDED_LOGS, PIDS_LIMIT } from "./container-limits.js";
import { createNamedVolumes, volumeMounts } from "./volume-mounts.js";

/** An init container or sidecar of resource_spec, in Kubernetes' container shape (the fields container compute reads). */
interface CompanionSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVariable[];
  volumeMounts?: unknown;
}

export interface CompanionContext {
  engine: ContainerEngine;
  deploymentId: string;
  /** The deployment's network, which init containers run on. */
  network: string;
  /** resource_spec.volumes, which their volumeMounts name. */
  volumes: unknown;
  bindAllowList: readonly string[];
  labels: Record<string, string>;
}

const INIT_TIMEOUT_MS = 10 * 60_000;

/** Reads resource_spec.init_containers or sidecars; a malformed entry fails the deploy with the reason. */
export function companionsOf(value: unknown, field: "init_containers" | "sidecars"): CompanionSpec[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new DeployError(`resource_spec.${field} must be a list of containers`);
  return value.map((entry: unknown, index) => {
    const spec = typeof entry === "object" && entry !== null ? { ...entry } : {};
    const name =
      "name" in spec && typeof spec.name === "string" && /^[a-z0-9][a-z0-9_.-]*$/i.test(spec.name) ? spec.name : undefined;
    const image = "image" in spec && typeof spec.image === "string" && spec.image !== "" ? spec.image : undefined;
    if (!name || !image)
      throw new DeployError(`resource_spec.${field}[${index}] needs a name (letters, digits, . _ -) and an image`);
    const strings = (list: unknown, key: string) => {
      if (list === undefined) return undefined;
      if (!Array.isArray(list) || !list.every((item): item is string => typeof item === "string"))
        throw new DeployError(`resource_spec.${field}[${index}].${key} must be a list of strings`);
      return list;
    };
    const env = "env" in spec ? spec.env : undefined;
    if (env !== undefined && (!Array.isArray(env) || !env.every(isNamedVariable)))
      throw new DeployError(`resource_spec.${field}[${index}].env must be a list of {name, value}`);
    return {
      name,
      image,
      command: strings("command" in spec ? spec.command : undefined, "command"),
      args: strings("args" in spec ? spec.args : undefined, "args"),
      env,
      volumeMounts: "volumeMounts" in spec ? spec.volumeMounts : undefined,
    };
  });
}

/** An entry of a container's env: its value as given (a missing one is empty). */
interface EnvVariable {
  name: string;
  value?: unknown;
}

function isNamedVariable(item: unknown): item is EnvVariable {
  return typeof item === "object" && item !== null && "name" in item && typeof item.name === "string";
}

/**
 * Creates (pulling its image when the engine lacks it) a companion container:
 * the main container's protections, its own command and environment, the
 * deployment's volumes it mounts. `mainId` joins a sidecar to the main
 * container's network namespace (it reaches the server on localhost:8000);
 * an init container runs on the deployment's network.
 */
async function createCompanion(
  context: CompanionContext,
  spec: CompanionSpec,
  role: "init" | "sidecar",
  mainId?: string,
): Promise<Docker.Container> {
  const { engine } = context;
  if (!(await imageExists(engine, spec.image))) {
    try {
      await pullImage(engine, spec.image, { log: () => {} });
    } catch (error) {
      throw new DeployError(`Pulling ${spec.image} for ${role} container ${spec.name} failed: ${(error as Error).message}`);
    }
  }
  const mounts = volumeMounts(context.deploymentId, context.volumes, spec.volumeMounts, context.bindAllowList);
  await createNamedVolumes(engine, mounts);
  return engine.docker.createContainer({
    Image: spec.image,
    ...(spec.command ? { Entrypoint: spec.command } : {}),
    ...(spec.args ? { Cmd: spec.args } : {}),
    Env: (spec.env ?? []).map(({ name, value }) => `${name}=${value ?? ""}`),
    Labels: { ...context.labels, "berth.managed": role, "berth.deployment": context.deploymentId, "berth.companion": spec.name },
    HostConfig: {
      Init: true,
      SecurityOpt: ["no-new-privileges"],
      CapDrop: ["ALL"],
      PidsLimit: PIDS_LIMIT,
      LogConfig: BOUNDED_LOGS,
      ...(mounts.length > 0 ? { Mounts: mounts } : {}),
      NetworkMode: mainId ? `container:${mainId}` : context.network,
    },
  });
}

/** Runs the init containers in order, each to completion; the first that fails fails the start, with its last output. */
export async function runInitContainers(context: CompanionContext, specs: CompanionSpec[], signal: AbortSignal): Promise<void> {
  for (const spec of specs) {
    signal.throwIfAborted();
    const container = await createCompanion(context, spec, "init");
    try {
      await container.start();
      const exit = (await Promise.race([
        container.wait(),
        new Promise((resolve) => setTimeout(resolve, INIT_TIMEOUT_MS).unref()),
      ])) as { StatusCode: number } | undefined;
      if (!exit) throw new DeployError(`Init container ${spec.name} did not finish within 10 minutes`);
      if (exit.StatusCode !== 0) {
        const output = demultiplexed(await container.logs({ stdout: true, stderr: true, tail: 10 }));
        const last = output.trim().split("\n").slice(-5).join("\n");
        throw new DeployError(`Init container ${spec.name} exited with code ${exit.StatusCode}${last ? `:\n${last}` : ""}`);
      }
    } finally {
      await container.remove({ force: true }).catch(() => {});
    }
  }
}

/** Starts the sidecars in the main container's network; returns them, for the main container's end to remove. */
export async function startSidecars(
  context: CompanionContext,
  specs: CompanionSpec[],
  mainId: string,
): Promise<Docker.Container[]> {
  const started: Docker.Container[] = [];
  try {
    for (const spec of specs) {
      const container = await createCompanion(context, spec, "sidecar", mainId);
      started.push(container);
      await container.start();
    }
  } catch (error) {
    await Promise.all(started.map((container) => container.remove({ force: true }).catch(() => {})));
    throw error instanceof DeployError ? error : new DeployError(`Starting a sidecar failed: ${(error as Error).message}`);
  }
  return started;
}
