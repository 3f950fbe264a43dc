import type { Logger } from "@berth/service-kit";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { type BuildSandbox, BuildError } from "../build/build.js";
import { plainServerPlan } from "../compute/server-command.js";
import { DeployError, type ServerResources, type ServerSandbox } from "../compute/types.js";
import { BwrapSandbox, type Owner, type SandboxDirs } from "./bwrap-sandbox.js";
import { parseEgressGrants } from "./egress-rules.js";
import { findNetworkTools, SandboxNetworks } from "./network.js";
import { probeSandbox } from "./probe.js";
import { SandboxUsers } from "./users.js";
import { WorkspaceGate } from "./workspace-gate.js";

export type { Owner };

/** How a listener runs the code it is given: sandboxed, or not (then refusing what it must). */
export interface Isolation {
  readonly sandboxed: boolean;
  /**
   * The sandbox of a build into `workDir` (of a revision with `resources`); undefined when builds run unsandboxed.
   * Rejects with a BuildError when refused.
   */
  forBuild(owner: Owner, workDir: string, resources?: ServerResources): Promise<BuildSandbox | undefined>;
  /** For LocalCompute: rejects with a DeployError when refused. */
  readonly server: ServerSandbox;
  close(): Promise<void>;
}

export interface IsolationOptions extends SandboxDirs {
  /** The listener's data directory (the sandbox's own state goes in `sandbox/`). */
  dataDir: string;
  /** Run every workspace's code even without a sandbox. */
  trustAllCode: boolean;
  /** Destinations sandboxes may reach besides the internet (BERTH_SANDBOX_EGRESS_ALLOW; see egress-rules.ts). */
  egressAllow?: string;
  /** The workspace of a deployment the listener was assigned. */
  tenantOf(deploymentId: string): string | undefined;
  /** For tests: no sandbox can be had, so the refusal paths run on a machine that has one (see probe.ts). */
  forceUnavailable?: boolean;
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
  const support = await probeSandbox(users.probeUid, { forceUnavailable: options.forceUnavailable });
  if (support.available) {
    const network = await startNetworks(options);
    if (typeof network === "string") {
      logger.warn(
        `builds and deployments run sandboxed (bubblewrap), each deployment as a user of its own, but NOT IN A NETWORK OF THEIR OWN (${network}): ` +
          "they reach the host's loopback services and private networks (see docs/security.md)",
      );
    } else {
      logger.info(
        "builds and deployments run sandboxed (bubblewrap): each deployment as a user of its own, seeing only its own files, " +
          "in a network namespace of its own that reaches the internet but not the host or private networks",
      );
    }
    const sandbox = new BwrapSandbox(support.tools, users, options, typeof network === "string" ? undefined : network);
    return {
      sandboxed: true,
      forBuild: (owner, workDir) => sandbox.forBuild(owner, workDir),
      server: sandbox.server,
      close: () => sandbox.close(),
    };
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
    close: async () => {},
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

/**
 * A network namespace per sandbox, when the tools are there and a real one
 * can be set up (leftovers of this listener's previous run removed first);
 * otherwise the reason.
 */
async function startNetworks(options: IsolationOptions): Promise<SandboxNetworks | string> {
  const tools = findNetworkTools(process.env.PATH);
  if (typeof tools === "string") return tools;
  // Per listener data directory: listeners sharing a host remove only their own leftovers.
  const prefix = `berth-${createHash("sha256").update(options.dataDir).digest("hex").slice(0, 10)}`;
  const networks = new SandboxNetworks(tools, prefix, parseEgressGrants(options.egressAllow));
  try {
    const leftovers = await networks.removeLeftovers();
    if (leftovers > 0) options.logger.warn({ count: leftovers }, "removed sandbox networks left by a previous listener");
    const probe = await networks.open({ loopbackPorts: [] });
    await probe.release();
  } catch (error) {
    return `a test network namespace failed: ${(error as Error).message.split("\n")[0]}`;
  }
  return networks;
}
