import { randomBytes } from "node:crypto";
import { chown } from "node:fs/promises";
import type { ContainerEngine } from "../../engine/docker-engine.js";
import { untilServing } from "../health.js";
import type { OutputLine } from "../process-output.js";
import { serverEnv } from "../server-command.js";
import { DeployError, type ServerSpec } from "../types.js";
import { ContainerServer } from "./container-server.js";
import { type CompanionContext, companionsOf, runInitContainers, startSidecars } from "./companions.js";
import { BOUNDED_LOGS, PIDS_LIMIT, sizeLimits } from "./container-limits.js";
import { controlPlaneEndpointsOf, deploymentNetworkOf, ensureDeploymentNetwork } from "./deployment-network.js";
import { createNamedVolumes, volumeMounts } from "./volume-mounts.js";

/** Inside the image: the port `berth serve` listens on and the data volume (see build/image/dockerfile.ts). */
const PORT = "8000/tcp";
const DATA_DIR = "/data";
/** Agent servers run as nobody: nothing of the image is theirs to change, only /data and /tmp. */
const SERVER_USER = 65534;

export interface ContainerLaunchOptions {
  healthTimeoutMs: number;
  killGraceMs: number;
  onLine: (line: OutputLine) => void;
  signal: AbortSignal;
  /** Labels every container of this listener carries, to find its leftovers after a crash. */
  ownerLabels: Record<string, string>;
  /** Host folders a hostPath volume may bind (BERTH_CONTAINER_BIND_ALLOW). */
  bindAllowList: readonly string[];
}

/**
 * Creates and starts a container of the revision's image and resolves once
 * `GET /ok` answers 200 on its port, published on 127.0.0.1 only. The
 * container runs on the deployment's own network (the internet, not the
 * host, other deployments nor private ranges: deployment-network.ts) with an
 * init (signals reach the server, zombies are reaped), no new privileges, no
 * capabilities, a read-only root with a tmpfs /tmp, the deployment's data dir
 * as /data, the spec's memory and CPU limits, a pids limit and bounded logs.
 */
export async function launchContainer(
  engine: ContainerEngine,
  spec: ServerSpec,
  options: ContainerLaunchOptions,
): Promise<ContainerServer> {
  if (!spec.image) throw new DeployError("The revision has no image to run");
  options.signal.throwIfAborted();
  const own = !spec.externalImage;
  if (own) await chown(spec.dataDir, SERVER_USER, SERVER_USER);
  const env = { ...serverEnv(spec, {}), ...(own ? { HOME: "/tmp" } : {}), PORT: PORT.split("/")[0]! };
  const mounts = volumeMounts(spec.deploymentId, spec.volumes?.volumes, spec.volumes?.mounts, options.bindAllowList);
  // The deployment's network (a scale-out deployment's, spec.network, was made with its database), with its exceptions
  // for the control plane.
  const network = spec.network ?? deploymentNetworkOf(spec.deploymentId);
  try {
    await ensureDeploymentNetwork(engine, spec.deploymentId, await controlPlaneEndpointsOf(spec.env));
  } catch (error) {
    throw new DeployError(`Preparing the deployment's network failed: ${(error as Error).message}`);
  }
  const companions: CompanionContext = {
    engine,
    network,
    deploymentId: spec.deploymentId,
    volumes: spec.volumes?.volumes,
    bindAllowList: options.bindAllowList,
    labels: { ...options.ownerLabels, "berth.revision": spec.revisionId },
  };
  const initContainers = companionsOf(spec.companions?.initContainers, "init_containers");
  const sidecars = companionsOf(spec.companions?.sidecars, "sidecars");
  await runInitContainers(companions, initContainers, options.signal);
  let container: Awaited<ReturnType<typeof engine.docker.createContainer>>;
  try {
    await createNamedVolumes(engine, mounts);
    container = await engine.docker.createContainer({
      name: `berth-${spec.deploymentId.slice(0, 8)}-${spec.revisionId.slice(0, 8)}-${randomBytes(3).toString("hex")}`,
      Image: spec.image,
      Env: Object.entries(env).map(([name, value]) => `${name}=${value}`),
      ...(own ? { User: `${SERVER_USER}:${SERVER_USER}` } : {}),
      ExposedPorts: { [PORT]: {} },
      Labels: {
        ...spec.labels,
        ...options.ownerLabels,
        "berth.managed": "server",
        "berth.deployment": spec.deploymentId,
        "berth.revision": spec.revisionId,
        "berth.role": spec.role ?? "api",
      },
      HostConfig: {
        Init: true,
        ReadonlyRootfs: own,
        Tmpfs: { "/tmp": "rw,noexec,nosuid,nodev,size=512m" },
        SecurityOpt: ["no-new-privileges"],
        CapDrop: ["ALL"],
        PortBindings: { [PORT]: [{ HostIp: "127.0.0.1", HostPort: "" }] },
        NetworkMode: network,
        Binds: [`${spec.dataDir}:${DATA_DIR}`],
        ...(mounts.length > 0 ? { Mounts: mounts } : {}),
        PidsLimit: PIDS_LIMIT,
        LogConfig: BOUNDED_LOGS,
        ...sizeLimits(spec.resources?.memoryLimitMb, spec.resources?.cpu),
      },
    });
  } catch (error) {
    throw new DeployError(`Creating the container failed: ${(error as Error).message}`);
  }
  let resolveUrl: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => (resolveUrl = resolve));
  const server = new ContainerServer(engine.docker, container, url, options.onLine);
  try {
    await container.start();
    server.followOutput();
    server.adoptCompanions(await startSidecars(companions, sidecars, container.id));
    const info = await container.inspect();
    const port = info.NetworkSettings.Ports[PORT]?.[0]?.HostPort;
    if (!port) throw new Error("the engine published no port");
    resolveUrl(`http://127.0.0.1:${port}`);
  } catch (error) {
    await server.terminate(options.killGraceMs);
    if (error instanceof DeployError) throw error;
    throw new DeployError(`Starting the container failed: ${(error as Error).message}`);
  }
  await untilServing(server, options);
  return server;
}
