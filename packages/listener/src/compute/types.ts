import type { SpawnPlan } from "../process/spawn-plan.js";

/**
 * Runs a platform worker (a scale-out deployment's worker container or pod)
 * executes at once. The platform sets BERTH_WORKERS to it rather than leaving
 * the agent server's default (sized for I/O-bound graphs): a deployment's
 * graphs may be CPU-bound and its containers have CPU and memory limits, so
 * its workers keep the hosted platform's default, and the autoscaler divides
 * the runs by the slots the workers really have.
 */
export const PLATFORM_WORKER_SLOTS = 10;

/** What a revision needs to run as an agent server: a local process of a built project, or a container of an image. */
export interface ServerSpec {
  deploymentId: string;
  revisionId: string;
  /** On local compute: the absolute path of langgraph.json in the built project (see configFileOf). */
  configFile?: string;
  /** On container compute: the image to run (its command serves its own langgraph.json). */
  image?: string;
  /**
   * The image is the user's (external_image): it keeps its own user and a
   * writable root, and is told its port in PORT; Berth's images run as nobody on a read-only root.
   */
  externalImage?: boolean;
  /** The deployment's persistent data dir (outlives revisions). */
  dataDir: string;
  /**
   * The deployment's secrets as env vars + platform vars, merged over a minimal
   * base (PATH, HOME, TMPDIR, NODE_ENV): the listener's own environment is not passed on.
   */
  env: Record<string, string>;
  resources?: ServerResources;
  /** A container of a scale-out deployment: an API server (behind the router) or a worker (runs only). */
  role?: "api" | "worker";
  /** A container joins this network instead of the engine's default (a scale-out deployment's own, with its database). */
  network?: string;
  /** Container labels (resource_spec.labels and annotations); a local process has none. */
  labels?: Record<string, string>;
  /** resource_spec.volumes and volume_mounts, as given (container compute checks and maps them). */
  volumes?: { volumes: unknown; mounts: unknown };
  /** resource_spec.init_containers and sidecars, as given (container compute checks and runs them). */
  companions?: { initContainers: unknown; sidecars: unknown };
}

/**
 * What a revision's processes may use. A local process: memoryLimitMb caps
 * the V8 heap (--max-old-space-size, 3/4 of it) and, with the other fields,
 * the kernel's limits of its sandbox (see sandbox/limits.ts). A container:
 * memory and CPU limits of the engine. workers sets BERTH_WORKERS on both.
 */
export interface ServerResources {
  memoryLimitMb?: number | null;
  cpu?: number | null;
  workers?: number | null;
  /** Processes and threads (local compute). */
  processes?: number | null;
  /** Sizes of the deployment's /data and /tmp in MiB (local compute, fixed when first made). */
  dataDiskMb?: number | null;
  tmpDiskMb?: number | null;
}

export type LogSink = (entry: { level: "info" | "warn" | "error"; message: string; revisionId: string }) => void;

export interface ComputeEvent {
  deploymentId: string;
  revisionId: string;
  /** crashed: exited unexpectedly (or a restart failed); restarted: healthy again; gave_up: no more restarts. */
  kind: "crashed" | "restarted" | "gave_up";
  message: string;
}

export interface ServerInstance {
  readonly deploymentId: string;
  readonly revisionId: string;
  /** Where the process serves; changes when a restart picks another port (see onUrlChange). */
  readonly url: string;
  /** The current process (0 while none runs: between a crash and its restart). */
  readonly pid: number;
  /** The graphs its current process said it loaded (local processes only). */
  readonly graphs?: readonly string[];
  /** True while a process that passed its health check runs. */
  healthy(): boolean;
  /** Calls `listener` with the new URL after each restart; returns the unsubscribe function. */
  onUrlChange(listener: (url: string) => void): () => void;
  /** SIGTERM, wait for exit (SIGKILL after graceMs, default 30 s). Stops supervision; idempotent. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * How the agent server of a revision is started (see sandbox/): in a sandbox
 * as the deployment's user, or as the listener's user when it has no
 * sandbox. Rejects with a DeployError when the listener refuses to run it.
 */
export interface ServerSandbox {
  plan(spec: ServerSpec, berthBin: string): Promise<SpawnPlan>;
}

/** A revision could not be started; the message is the reason, with the process's last log lines. */
export class DeployError extends Error {
  override name = "DeployError";
}

/** The built project a local server runs; a spec without one (an image's) cannot run as a local process. */
export function configFileOf(spec: ServerSpec): string {
  if (!spec.configFile) throw new DeployError("The revision has no build to run");
  return spec.configFile;
}
