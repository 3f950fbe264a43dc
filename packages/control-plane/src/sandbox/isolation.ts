import type { Logger } from "@berth/service-kit";
import { join } from "node:path";
import { type BuildSandbox, BuildError } from "../build/build.js";
import { plainServerPlan } from "../compute/server-command.js";
import { DeployError, type ServerSandbox } from "../compute/types.js";
import { BwrapSandbox, type Owner, type SandboxDirs } from "./bwrap-sandbox.js";
import { probeSandbox } from "./probe.js";
import { SandboxUsers } from "./users.js";
import { WorkspaceGate } from "./workspace-gate.js";

export type { Owner };

/** How a listener runs the code it is given: sandboxed, or not (then refusing what it must). */
export interface Isolation {
  readonly sandboxed: boolean;
  /** The sandbox of a build into `workDir`; undefined when builds run unsandboxed. Rejects with a BuildError when refused. */
  forBuild(owner: Owner, workDir: string): Promise<BuildSandbox | undefined>;
  /** For LocalCompute: rejects with a DeployError when refused. */
  readonly server: ServerSandbox;
}

export interface IsolationOptions extends SandboxDirs {
  /** The listener's data directory (the sandbox's own state goes in `sandbox/`). */
  dataDir: string;
  /** Run every workspace's code even without a sandbox. */
  trustAllCode: boolean;
  /** The workspace of a deployment the listener was assigned. */
  tenantOf(deploymentId: string): string | undefined;
  logger: Logger;
}

/**
 * Probes for a sandbox and says at start, in one line, how code will run:
 * sandboxed; or not, with the reason, running one workspace's deployments
 * only unless `trustAllCode`.
 */
export async function startIsolation(options: IsolationOptions): Promise<Isolation> {
  const { logger } = options;
  const stateDir = join(options.dataDir, "sandbox");
  const users = await SandboxUsers.open(stateDir, options.deployments);
  const support = await probeSandbox(users.probeUid);
  if (support.available) {
    logger.info(
      "builds and deployments run sandboxed (bubblewrap): each deployment as a user of its own, seeing only its own files",
    );
    const sandbox = new BwrapSandbox(support.tools, users, options);
    return { sandboxed: true, forBuild: (owner, workDir) => sandbox.forBuild(owner, workDir), server: sandbox.server };
  }
  if (options.trustAllCode) {
    logger.warn(
      `NO SANDBOX (${support.reason}): builds and deployments of every workspace run as the listener's own user and can read its files (--trust-all-code)`,
    );
    return unsandboxed(undefined, options.tenantOf);
  }
  logger.warn(
    `NO SANDBOX (${support.reason}): builds and deployments run as the listener's own user, so it runs the deployments of ONE workspace only; ` +
      "--trust-all-code (BERTH_TRUST_ALL_CODE=1) runs every workspace's (see docs/security.md)",
  );
  return unsandboxed(new WorkspaceGate(join(stateDir, "workspace"), support.reason), options.tenantOf);
}

/** Code runs as the listener's user; `gate`, when given, keeps it to one workspace. */
function unsandboxed(gate: WorkspaceGate | undefined, tenantOf: (deploymentId: string) => string | undefined): Isolation {
  return {
    sandboxed: false,
    async forBuild(owner) {
      const refusal = await gate?.refusal(owner.tenantId);
      if (refusal) throw new BuildError(refusal);
      return undefined;
    },
    server: {
      async plan(spec, berthBin) {
        if (gate) {
          const tenantId = tenantOf(spec.deploymentId);
          if (tenantId === undefined) throw new DeployError(`Deployment ${spec.deploymentId} is not assigned to this listener`);
          const refusal = await gate.refusal(tenantId);
          if (refusal) throw new DeployError(refusal);
        }
        return plainServerPlan(spec, berthBin);
      },
    },
  };
}
