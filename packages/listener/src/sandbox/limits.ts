import type { Logger } from "@berth/service-kit";
import { createHash } from "node:crypto";
import type { ServerResources } from "../compute/types.js";
import type { LimitHits, PlanLimits, Rlimits } from "../process/spawn-plan.js";
import { type Cgroup, type CgroupLimits, Cgroups } from "./cgroups.js";
import { DeploymentDisks, type DiskName, type DiskSizes } from "./disks.js";

/** What one of a deployment's processes may use on local compute. */
export interface LocalLimits {
  memoryMb: number;
  /** A ceiling in cores, or none (then it only weighs as much as one core under contention). */
  cpu: number | null;
  /** Processes and threads. */
  processes: number;
  disks: DiskSizes;
}

/**
 * A deployment whose deployment_type and resource_spec say nothing (prod,
 * or none given): sized so that one deployment cannot take the machine.
 * The sizes per deployment_type are in listener/revision-spec.ts.
 */
export const DEFAULT_LIMITS: LocalLimits = {
  memoryMb: 4096,
  cpu: null,
  processes: 512,
  disks: { data: 10_240, tmp: 2048 },
};

/** A build (npm and its children, a bundler) needs more than a small server: at least this, never less than its server. */
export const BUILD_LIMITS = { memoryMb: 2048, processes: 1024 };

/** Open files of every process: well above a server's needs, well below the host's. */
const OPEN_FILES = 8192;

/** The limits of the deployment's agent servers. */
export function serverLimitsOf(resources: ServerResources | undefined): LocalLimits {
  return {
    memoryMb: positive(resources?.memoryLimitMb) ?? DEFAULT_LIMITS.memoryMb,
    cpu: positive(resources?.cpu) ?? DEFAULT_LIMITS.cpu,
    processes: positive(resources?.processes) ?? DEFAULT_LIMITS.processes,
    disks: {
      data: positive(resources?.dataDiskMb) ?? DEFAULT_LIMITS.disks.data,
      tmp: positive(resources?.tmpDiskMb) ?? DEFAULT_LIMITS.disks.tmp,
    },
  };
}

/** The limits of the deployment's build commands: more memory and processes than a small server, no CPU ceiling. */
export function buildLimitsOf(resources: ServerResources | undefined): LocalLimits {
  const server = serverLimitsOf(resources);
  return {
    ...server,
    memoryMb: Math.max(server.memoryMb, BUILD_LIMITS.memoryMb),
    processes: Math.max(server.processes, BUILD_LIMITS.processes),
    cpu: null,
  };
}

export interface ResourceLimitsOptions {
  /** The listener's data directory: names its cgroups, so that listeners sharing a host keep apart. */
  dataDir: string;
  /** Where the listener keeps its own state (the record of its cgroups, the test disk). */
  stateDir: string;
  deploymentsDir: string;
  /** Disks need the sandbox (they are bound at /data and /tmp); without one, processes still get cgroups. */
  sandboxed: boolean;
  logger: Logger;
}

/**
 * The kernel's limits on the deployments' processes: each server and each
 * build command in a cgroup of its own (memory with swap, processes, CPU),
 * with rlimits, and, in a sandbox, the deployment's /data and /tmp on disks
 * of a fixed size (see cgroups.ts, disks.ts). What the host does not offer
 * is said once, at start, and the rest goes on without it.
 */
export class ResourceLimits {
  private closed = false;
  /** Should the listener exit without close() (a shutdown past its deadline), its disks are not left mounted. */
  private readonly onExit = () => this.disks?.releaseAllNow();

  private constructor(
    private readonly cgroups: Cgroups | undefined,
    private readonly disks: DeploymentDisks | undefined,
    private readonly sandboxed: boolean,
  ) {}

  static async start(options: ResourceLimitsOptions): Promise<ResourceLimits> {
    const name = createHash("sha256").update(options.dataDir).digest("hex").slice(0, 12);
    const [cgroups, disks] = await Promise.all([
      Cgroups.open(name, `${options.stateDir}/cgroups`),
      options.sandboxed
        ? DeploymentDisks.open(options.deploymentsDir, options.stateDir)
        : Promise.resolve({ available: false as const, reason: "there is no sandbox to mount them in" }),
    ]);
    const limits = new ResourceLimits(
      cgroups.available ? cgroups.cgroups : undefined,
      disks.available ? disks.disks : undefined,
      options.sandboxed,
    );
    process.once("exit", limits.onExit);
    const diskLine = disks.available
      ? "its /data and /tmp on disks of a fixed size (loop-mounted ext4 images)"
      : `its /data and /tmp WITHOUT A SIZE LIMIT (${disks.reason})`;
    if (cgroups.available) {
      options.logger.info(
        `resource limits: each deployment's processes in cgroups of their own, ${cgroups.cgroups.describe()}, with memory, process and CPU limits; ${diskLine} (see docs/security.md)`,
      );
    } else {
      options.logger.warn(
        `NO RESOURCE LIMITS (${cgroups.reason}): a deployment can use all the memory, processes and CPU of the machine; ${diskLine} (see docs/security.md)`,
      );
    }
    return limits;
  }

  /** Mounts the deployment's disks `names` (made on first use), before a sandbox binds them. */
  async prepare(deploymentId: string, names: readonly DiskName[], limits: LocalLimits): Promise<void> {
    await this.disks?.ensure(deploymentId, names, limits.disks);
  }

  /**
   * A new cgroup with `limits` for one process of the deployment, and the
   * process's rlimits; undefined without cgroups. `disks` are those the
   * process sees, checked for room when it ends.
   */
  async forProcess(
    deploymentId: string,
    kind: "server" | "build",
    limits: LocalLimits,
    disks: readonly DiskName[],
  ): Promise<PlanLimits | undefined> {
    if (!this.cgroups) return undefined;
    // A build still starting while the listener stops must leave no cgroup behind.
    if (this.closed) throw new Error("the listener is stopping");
    const cgroupLimits: CgroupLimits = {
      memoryMb: limits.memoryMb,
      processes: limits.processes,
      cpuWeight: limits.cpu ?? 1,
      cpuQuota: limits.cpu ?? undefined,
    };
    const cgroup = this.cgroups.create(deploymentId, kind, cgroupLimits);
    const rlimits: Rlimits = {
      openFiles: OPEN_FILES,
      coreKb: 0,
      // Counted per user: in a sandbox, the deployment's processes alone (two servers meet during a switch).
      userProcesses: this.sandboxed ? limits.processes * 2 : undefined,
    };
    return {
      cgroupProcs: cgroup.procsFiles,
      rlimits,
      finish: () => this.finish(deploymentId, cgroup, limits, disks),
      discard: () => cgroup.removeNow(),
    };
  }

  /** Removes the deployment's cgroups and unmounts its disks (it is deleted). */
  async release(deploymentId: string): Promise<void> {
    await this.cgroups?.removeDeployment(deploymentId);
    await this.disks?.release(deploymentId);
  }

  /** Removes every cgroup and unmounts every disk of the listener (it stops). */
  async close(): Promise<void> {
    this.closed = true;
    process.off("exit", this.onExit);
    await this.cgroups?.removeAll();
    await this.disks?.close();
  }

  private async finish(
    deploymentId: string,
    cgroup: Cgroup,
    limits: LocalLimits,
    disks: readonly DiskName[],
  ): Promise<LimitHits> {
    const hits: LimitHits = {};
    try {
      const events = cgroup.events();
      if (events.oomKills > 0) hits.outOfMemoryMb = limits.memoryMb;
      if (events.refusedForks > 0) hits.refusedForks = { count: events.refusedForks, limit: limits.processes };
      const full = (await this.disks?.full(deploymentId, disks).catch(() => [])) ?? [];
      if (full.length > 0) hits.fullDisks = full;
    } finally {
      await cgroup.remove();
    }
    return hits;
  }
}

function positive(value: number | null | undefined): number | undefined {
  return value != null && value > 0 ? value : undefined;
}
