import { mkdir, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import type { BuildSandbox } from "../build/build-sandbox.js";
import { commandEnv } from "../build/command-env.js";
import { serverArgs, serverEnv } from "../compute/server-command.js";
import { configFileOf, DeployError, type ServerSandbox, type ServerSpec } from "../compute/types.js";
import { bwrapArgs, type MountOp, type SandboxTools, type SandboxUser } from "./bwrap-args.js";
import { etcFiles, INSIDE, INSIDE_BERTH_BIN, insidePath, systemMounts } from "./host-view.js";
import { handOver, privateDir, seal } from "./ownership.js";
import type { SpawnPlan } from "../process/spawn-plan.js";
import type { SandboxNetworks } from "./network.js";
import { SANDBOX_DNS_ADDRESS } from "./egress-rules.js";
import { PlatformGateway } from "./platform-gateway.js";
import { freeLoopbackPort } from "./free-port.js";
import type { SandboxUsers } from "./users.js";

/** Whose code a build or server is: the sandbox's user is the deployment's, the install cache the workspace's. */
export interface Owner {
  deploymentId: string;
  tenantId: string;
}

export interface SandboxDirs {
  /** `<artifacts>/<deployment id>/<build key>`: each deployment's builds. */
  artifacts: string;
  /** `<deployments>/<deployment id>/`: its data, tmp, uid and pid files. */
  deployments: string;
}

/**
 * Builds and agent servers in bubblewrap sandboxes, as the deployment's user
 * (see users.ts). A sandbox sees the system read-only (/usr, the essentials
 * of /etc, Berth's install at /opt/berth) and, of the listener's data, only
 * its deployment's: the build directory at /app (writable during the build,
 * read-only for the server), the database directory at /data (servers), and
 * the deployment's own /tmp. Not the control plane's keys or database, not
 * another deployment's files, not the host's processes. See docs/security.md.
 */
export class BwrapSandbox {
  readonly server: ServerSandbox = { plan: (spec) => this.serverPlan(spec) };
  /** One gateway per control plane the servers' tracing and Auth Service variables name (usually one). */
  private readonly gateways = new Map<string, PlatformGateway>();

  constructor(
    private readonly tools: SandboxTools,
    private readonly users: SandboxUsers,
    private readonly dirs: SandboxDirs,
    /** A network namespace per process; without, sandboxes share the host's network. */
    private readonly network?: SandboxNetworks,
  ) {}

  async close(): Promise<void> {
    await Promise.all([...this.gateways.values()].map((gateway) => gateway.close()));
  }

  /** The sandbox of a build into `workDir` (an empty directory, which becomes the build's user's). */
  async forBuild(owner: Owner, workDir: string): Promise<BuildSandbox> {
    const user = await this.users.userOf(owner.deploymentId);
    const base = await this.deploymentMounts(owner.deploymentId, user);
    await privateDir(workDir, user);
    const mounts: MountOp[] = [...base, { kind: "bind", source: workDir, target: INSIDE.app, writable: true }];
    const inside = (path: string) => translate(workDir, INSIDE.app, path);
    return {
      // Package managers' caches and HOME in the deployment's /tmp: kept between its builds, seen by no one else.
      env: commandEnv(INSIDE.tmp, { HOME: INSIDE.tmp, TMPDIR: INSIDE.tmp, PATH: insidePath() }),
      berthBin: INSIDE_BERTH_BIN,
      inside,
      plan: (argv, cwd, env) => this.isolatedPlan(user, mounts, inside(cwd), argv, env),
      handOver: (path, directoriesOnly) => handOver(path, user, directoriesOnly),
      seal,
    };
  }

  private async serverPlan(spec: ServerSpec): Promise<SpawnPlan> {
    const artifact = this.artifactOf(spec);
    const user = await this.users.userOf(spec.deploymentId);
    const base = await this.deploymentMounts(spec.deploymentId, user);
    // Also what an unsandboxed listener left behind (a database created as root).
    await privateDir(spec.dataDir, user);
    await handOver(spec.dataDir, user);
    const mounts: MountOp[] = [
      ...base,
      { kind: "bind", source: artifact, target: INSIDE.app, writable: false },
      { kind: "bind", source: spec.dataDir, target: INSIDE.data, writable: true },
    ];
    const configFile = translate(artifact, INSIDE.app, configFileOf(spec));
    const inside = { ...spec, configFile, dataDir: INSIDE.data };
    const env = serverEnv(spec, { ...process.env, PATH: insidePath(), HOME: INSIDE.tmp, TMPDIR: INSIDE.tmp });
    const cwd = dirname(configFile);
    if (!this.network) return this.plan(user, mounts, cwd, [process.execPath, ...serverArgs(INSIDE_BERTH_BIN, inside)], env);
    const gatewayPort = await this.throughGateway(env);
    // The server listens on a port its namespace forwards from the host's loopback; another process may take a
    // free port before pasta binds it, so a few are tried.
    for (let attempt = 1; ; attempt += 1) {
      const port = await freeLoopbackPort();
      try {
        const namespace = await this.network.open({
          inboundPort: port,
          loopbackPorts: gatewayPort === undefined ? [] : [gatewayPort],
        });
        const argv = [process.execPath, ...serverArgs(INSIDE_BERTH_BIN, inside, port)];
        return this.inNamespace(namespace, this.plan(user, mounts, cwd, argv, env));
      } catch (error) {
        if (attempt >= 3) throw new DeployError(`The deployment's network could not be set up: ${(error as Error).message}`);
      }
    }
  }

  /** A build command's plan: in a network namespace of its own, when the listener isolates networks. */
  private async isolatedPlan(
    user: SandboxUser,
    mounts: readonly MountOp[],
    cwd: string,
    argv: string[],
    env: Record<string, string>,
  ): Promise<SpawnPlan> {
    const plan = this.plan(user, mounts, cwd, argv, env);
    if (!this.network) return plan;
    return this.inNamespace(await this.network.open({ loopbackPorts: [] }), plan);
  }

  private inNamespace(namespace: { path: string; release(): Promise<void> }, plan: SpawnPlan): SpawnPlan {
    // nsenter joins the namespace and execs bwrap: the process is still bwrap, as process-tree.ts expects.
    return {
      ...plan,
      file: this.network!.tools.nsenter,
      args: [`--net=${namespace.path}`, "--", plan.file, ...plan.args],
      release: namespace.release,
    };
  }

  /**
   * Points the server's tracing and Auth Service variables at the platform
   * gateway (the one address on the host its network reaches): returns the
   * gateway's port, or undefined when the server has neither.
   */
  private async throughGateway(env: Record<string, string>): Promise<number | undefined> {
    const base = env.BERTH_AUTH_SERVICE_URL ?? env.LANGSMITH_ENDPOINT?.replace(/\/api\/v1\/?$/, "");
    if (!base) return undefined;
    let gateway = this.gateways.get(base);
    if (!gateway) {
      gateway = new PlatformGateway(new URL(base));
      this.gateways.set(base, gateway);
    }
    const port = await gateway.port();
    const local = `http://127.0.0.1:${port}`;
    if (env.LANGSMITH_ENDPOINT) env.LANGSMITH_ENDPOINT = `${local}/api/v1`;
    if (env.BERTH_AUTH_SERVICE_URL) env.BERTH_AUTH_SERVICE_URL = local;
    return port;
  }

  private plan(
    user: SandboxUser,
    mounts: readonly MountOp[],
    cwd: string,
    argv: string[],
    env: Record<string, string>,
  ): SpawnPlan {
    return { file: this.tools.bwrap, args: bwrapArgs(this.tools, user, mounts, cwd, argv), env, cwd: "/", sandboxed: true };
  }

  /**
   * What every sandbox of the deployment has: its /tmp (a directory of its
   * own, so tsx's compile cache and npm's cache survive between starts),
   * passwd and group naming its user, and the system.
   */
  private async deploymentMounts(deploymentId: string, user: SandboxUser): Promise<MountOp[]> {
    const dir = join(this.dirs.deployments, deploymentId);
    const tmp = join(dir, "tmp");
    const etc = join(dir, "sandbox-etc");
    await privateDir(tmp, user);
    await mkdir(etc, { recursive: true, mode: 0o700 });
    const files: Record<string, string> = etcFiles(user.uid, user.gid);
    // In a network of its own, names are resolved through pasta's forwarder (the host's resolver may be out of reach).
    if (this.network) files["resolv.conf"] = `nameserver ${SANDBOX_DNS_ADDRESS}\n`;
    await Promise.all(Object.entries(files).map(([name, text]) => writeFile(join(etc, name), text, { mode: 0o644 })));
    return [
      // First: a later mount below /tmp (a CA bundle kept there) must land on top of it, not under it.
      { kind: "bind", source: tmp, target: INSIDE.tmp, writable: true },
      ...systemMounts(),
      ...Object.keys(files).map(
        (name): MountOp => ({ kind: "bind", source: join(etc, name), target: `/etc/${name}`, writable: false }),
      ),
    ];
  }

  /** The build `spec.configFile` lies in, which must be one of the deployment's (`<artifacts>/<deployment id>/<key>/...`). */
  private artifactOf(spec: ServerSpec): string {
    const [owner, key, ...rest] = relative(this.dirs.artifacts, configFileOf(spec)).split(sep);
    if (owner !== spec.deploymentId || !key || rest.length === 0) {
      throw new DeployError(`The build to run (${spec.configFile}) is not one of deployment ${spec.deploymentId}'s builds`);
    }
    return join(this.dirs.artifacts, owner, key);
  }
}

/** `path` (under `root` on the host) as a sandbox sees it, `root` being mounted at `insideRoot`. */
function translate(root: string, insideRoot: string, path: string): string {
  const rel = relative(root, path);
  if (rel.startsWith("..") || isAbsolute(rel)) throw new Error(`${path} is not under ${root}`);
  return rel === "" ? insideRoot : join(insideRoot, rel);
}
