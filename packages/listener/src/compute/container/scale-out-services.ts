import { createHash } from "node:crypto";
import type Docker from "dockerode";
import type { ContainerEngine } from "../../engine/docker-engine.js";
import { DeployError } from "../types.js";
import { BOUNDED_LOGS, PIDS_LIMIT, sizeLimits } from "./container-limits.js";
import { ensureDeploymentNetwork, removeDeploymentNetwork } from "./deployment-network.js";
import { createNamedVolumes, type EngineMount } from "./volume-mounts.js";

/** The sizes resource_spec gives a scale-out deployment's PostgreSQL (db_*) and Redis (cache_*). */
export interface ScaleOutServicesSpec {
  deploymentId: string;
  /** The image with both servers (build/image/scale-out-image.ts) and the folder PostgreSQL keeps its data in. */
  image: string;
  postgresData: string;
  passwords: { db: string; cache: string };
  db: { cpu: number | null; memoryLimitMb: number | null; maxConnections: number | null };
  cache: { cpu: number | null; memoryLimitMb: number | null };
}

/** How the deployment's containers reach them: the network to join and the variables to set. */
export interface ScaleOutEndpoints {
  network: string;
  env: Record<string, string>;
}

const READY_TIMEOUT_MS = 120_000;

/**
 * Makes sure the deployment's PostgreSQL and Redis run (created once, kept
 * across revisions and listener restarts, recreated when their sizes change;
 * the database's data in the deployment's named volume) on the deployment's
 * network (deployment-network.ts), where its containers reach them as `db` and `cache`.
 * Resolves once both answer.
 */
export async function ensureScaleOutServices(
  engine: ContainerEngine,
  spec: ScaleOutServicesSpec,
  signal: AbortSignal,
): Promise<ScaleOutEndpoints> {
  const labels = { "berth.managed": "scale-out", "berth.deployment": spec.deploymentId };
  const network = await ensureDeploymentNetwork(engine, spec.deploymentId);
  const common = (service: string, user: string) => ({
    Image: spec.image,
    User: user,
    Labels: { ...labels, "berth.service": service },
    HostConfig: {
      Init: true,
      NetworkMode: network,
      RestartPolicy: { Name: "unless-stopped" },
      SecurityOpt: ["no-new-privileges"],
      CapDrop: ["ALL"],
      PidsLimit: PIDS_LIMIT,
      LogConfig: BOUNDED_LOGS,
    },
    NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [service] } } },
  });
  const db = common("db", "postgres");
  const cache = common("cache", "redis");
  const dataVolume: EngineMount = {
    Type: "volume",
    // "--": no claim name of resource_spec.volumes (berth-<id>-<claim>) can be this.
    Source: `berth-${spec.deploymentId}--postgres`,
    Target: spec.postgresData,
    VolumeOptions: {
      NoCopy: false,
      Labels: { "berth.managed": "volume", "berth.deployment": spec.deploymentId },
      DriverConfig: { Name: "local", Options: {} },
    },
  };
  await createNamedVolumes(engine, [dataVolume]);
  await Promise.all([
    ensureContainer(engine.docker, `berth-${spec.deploymentId}-db`, {
      ...db,
      Cmd: ["/usr/local/bin/berth-postgres"],
      Env: [`POSTGRES_PASSWORD=${spec.passwords.db}`, `POSTGRES_MAX_CONNECTIONS=${spec.db.maxConnections ?? 100}`],
      HostConfig: {
        ...db.HostConfig,
        ...sizeLimits(spec.db.memoryLimitMb, spec.db.cpu),
        Tmpfs: { "/tmp": "rw,nosuid,nodev,size=64m" },
        Mounts: [dataVolume],
      },
    }),
    ensureContainer(engine.docker, `berth-${spec.deploymentId}-cache`, {
      ...cache,
      Cmd: ["/usr/local/bin/berth-redis"],
      Env: [
        `REDIS_PASSWORD=${spec.passwords.cache}`,
        ...(spec.cache.memoryLimitMb ? [`REDIS_MAXMEMORY=${Math.floor(spec.cache.memoryLimitMb * 0.9)}mb`] : []),
      ],
      HostConfig: { ...cache.HostConfig, ...sizeLimits(spec.cache.memoryLimitMb, spec.cache.cpu) },
    }),
  ]);
  await Promise.all([
    untilAnswers(
      engine.docker,
      `berth-${spec.deploymentId}-db`,
      ["sh", "-c", 'exec "$(echo /usr/lib/postgresql/*/bin)/pg_isready" -q -h 127.0.0.1'],
      signal,
    ),
    untilAnswers(
      engine.docker,
      `berth-${spec.deploymentId}-cache`,
      ["sh", "-c", 'redis-cli --no-auth-warning -a "$REDIS_PASSWORD" ping | grep -q PONG'],
      signal,
    ),
  ]);
  const database = `postgres://berth:${encodeURIComponent(spec.passwords.db)}@db:5432/postgres`;
  const redis = `redis://:${encodeURIComponent(spec.passwords.cache)}@cache:6379`;
  // Both spellings: Berth reads *_URL, the official server's image *_URI.
  return { network, env: { DATABASE_URL: database, REDIS_URL: redis, DATABASE_URI: database, REDIS_URI: redis } };
}

/**
 * Removes the deployment's PostgreSQL and Redis containers and its network with its firewall rules (called for
 * every deployment removed, scale-out or not; its volume goes with the deployment's volumes).
 */
export async function removeScaleOutServices(engine: ContainerEngine, deploymentId: string): Promise<void> {
  const containers = await engine.docker.listContainers({
    all: true,
    filters: { label: ["berth.managed=scale-out", `berth.deployment=${deploymentId}`] },
  });
  await Promise.all(containers.map((info) => engine.docker.getContainer(info.Id).remove({ force: true })));
  await removeDeploymentNetwork(engine, deploymentId);
}

/** Starts the named container as configured; one made from another configuration (sizes changed) is replaced. */
async function ensureContainer(docker: Docker, name: string, options: Docker.ContainerCreateOptions): Promise<void> {
  const fingerprint = createHash("sha256").update(JSON.stringify(options)).digest("hex").slice(0, 16);
  const wanted = { ...options, name, Labels: { ...options.Labels, "berth.config": fingerprint } };
  const existing = docker.getContainer(name);
  try {
    const info = await existing.inspect();
    if (info.Config.Labels["berth.config"] === fingerprint) {
      if (!info.State.Running) await existing.start();
      return;
    }
    await existing.remove({ force: true });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
  try {
    const container = await docker.createContainer(wanted);
    await container.start();
  } catch (error) {
    throw new DeployError(`Starting the deployment's ${name.split("-").at(-1)} container failed: ${(error as Error).message}`);
  }
}

/** Runs `command` in the container until it exits 0 (the server answers), or fails the deploy after READY_TIMEOUT_MS. */
async function untilAnswers(docker: Docker, name: string, command: string[], signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const container = docker.getContainer(name);
  for (;;) {
    signal.throwIfAborted();
    const exec = await container.exec({ Cmd: command, AttachStdout: false, AttachStderr: false });
    await exec.start({ Detach: true });
    let code: number | null = null;
    while (code === null) {
      const info = await exec.inspect();
      code = info.Running ? null : (info.ExitCode ?? 1);
      if (code === null) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (code === 0) return;
    if (Date.now() > deadline) {
      throw new DeployError(
        `The deployment's ${name.split("-").at(-1)} container did not answer within ${READY_TIMEOUT_MS / 1000} s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
