import type { Logger } from "@berth/service-kit";
import { join } from "node:path";
import { DeployError, type ServerResources } from "../compute/types.js";
import { BuildError } from "../build/errors.js";
import type { SpawnPlan } from "../process/spawn-plan.js";
import type { Isolation } from "./isolation.js";
import { buildLimitsOf, type LocalLimits, ResourceLimits, serverLimitsOf } from "./limits.js";
import type { DiskName } from "./disks.js";

/** An isolation whose processes run under the kernel's limits. */
export interface LimitedIsolation extends Isolation {
  /** Removes the deployment's cgroups and unmounts its disks: it is deleted (before its directory is removed). */
  release(deploymentId: string): Promise<void>;
}

/** A server sees both disks; a build command only /tmp (its /app is the build directory). */
const SERVER_DISKS: readonly DiskName[] = ["data", "tmp"];
const BUILD_DISKS: readonly DiskName[] = ["tmp"];

/**
 * `isolation` with resource limits (see limits.ts): every server and build
 * command it plans runs in a cgroup of its own, and in a sandbox the
 * deployment's disks are mounted before the sandbox binds them.
 */
export async function withResourceLimits(
  isolation: Isolation,
  options: { dataDir: string; deploymentsDir: string; logger: Logger },
): Promise<LimitedIsolation> {
  const limits = await ResourceLimits.start({
    dataDir: options.dataDir,
    stateDir: join(options.dataDir, "sandbox"),
    deploymentsDir: options.deploymentsDir,
    sandboxed: isolation.sandboxed,
    logger: options.logger,
  });
  const disksOf = (disks: readonly DiskName[]) => (isolation.sandboxed ? disks : []);
  /** Gives `plan` its cgroup; on failure, frees what the plan holds and throws `fail`'s error. */
  const limited = async (
    plan: SpawnPlan,
    deploymentId: string,
    kind: "server" | "build",
    processLimits: LocalLimits,
    disks: readonly DiskName[],
    fail: (message: string) => Error,
  ): Promise<SpawnPlan> => {
    try {
      return { ...plan, limits: await limits.forProcess(deploymentId, kind, processLimits, disksOf(disks)) };
    } catch (error) {
      await plan.release?.();
      throw fail(`its resource limits could not be set up: ${(error as Error).message}`);
    }
  };
  const prepare = async (
    deploymentId: string,
    disks: readonly DiskName[],
    processLimits: LocalLimits,
    fail: (m: string) => Error,
  ) => {
    if (!isolation.sandboxed) return;
    try {
      await limits.prepare(deploymentId, disks, processLimits);
    } catch (error) {
      throw fail(`the deployment's disks could not be mounted: ${(error as Error).message.split("\n")[0]}`);
    }
  };
  const deployError = (message: string) => new DeployError(`The agent server could not be started: ${message}`);
  const buildError = (message: string) => new BuildError(`The build could not be started: ${message}`);

  return {
    sandboxed: isolation.sandboxed,
    async forBuild(owner, workDir, resources?: ServerResources) {
      const buildLimits = buildLimitsOf(resources);
      await prepare(owner.deploymentId, BUILD_DISKS, buildLimits, buildError);
      const sandbox = await isolation.forBuild(owner, workDir, resources);
      if (!sandbox) return undefined;
      return {
        ...sandbox,
        plan: async (argv, cwd, env) =>
          limited(await sandbox.plan(argv, cwd, env), owner.deploymentId, "build", buildLimits, BUILD_DISKS, buildError),
      };
    },
    server: {
      async plan(spec, berthBin) {
        const serverLimits = serverLimitsOf(spec.resources);
        await prepare(spec.deploymentId, SERVER_DISKS, serverLimits, deployError);
        const plan = await isolation.server.plan(spec, berthBin);
        return limited(plan, spec.deploymentId, "server", serverLimits, SERVER_DISKS, deployError);
      },
    },
    release: (deploymentId) => limits.release(deploymentId),
    async close() {
      await isolation.close();
      await limits.close();
    },
  };
}
