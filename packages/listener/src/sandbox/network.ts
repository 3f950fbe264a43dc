import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { networkInterfaces } from "node:os";
import { promisify } from "node:util";
import { findProgram } from "./programs.js";
import { type EgressGrant, egressRuleset, loopbackPort, SANDBOX_DNS_ADDRESS } from "./egress-rules.js";

const run = promisify(execFile);

export interface NetworkTools {
  ip: string;
  nft: string;
  pasta: string;
  nsenter: string;
}

/** The programs a network namespace per sandbox needs, or why it cannot be had. */
export function findNetworkTools(path?: string): NetworkTools | string {
  const tools = {
    ip: findProgram("ip", path),
    nft: findProgram("nft", path),
    pasta: findProgram("pasta", path),
    nsenter: findProgram("nsenter", path),
  };
  const packages = { ip: "iproute2", nft: "nftables", pasta: "passt", nsenter: "util-linux" };
  const missing = (Object.keys(tools) as (keyof NetworkTools)[]).filter((name) => tools[name] === undefined);
  if (missing.length > 0) return `${missing.map((name) => `${name} (${packages[name]})`).join(", ")} not installed`;
  return tools as NetworkTools;
}

export interface NamespaceRequest {
  /** A port of the host's loopback that leads to the same port of the sandbox's loopback (a server's). */
  inboundPort?: number;
  /** Ports of the host's loopback the sandbox reaches at the same ports of its own loopback (the platform gateway). */
  loopbackPorts: readonly number[];
}

/** A sandbox's network namespace, alive until released. */
export interface SandboxNamespace {
  /** The namespace's file, for `nsenter --net=`. */
  readonly path: string;
  /** Ends its pasta and deletes it; idempotent. */
  release(): Promise<void>;
}

/** How long pasta may take to connect a namespace (it takes ~20 ms). */
const READY_TIMEOUT_MS = 10_000;
const NETNS_DIR = "/run/netns";

/**
 * A network namespace per sandboxed process, connected to the outside by
 * pasta (user-mode networking: the host's firewall and routes are left as
 * they are) and filtered by an nftables ruleset loaded before the process
 * starts: the internet is reachable, the host's loopback and addresses and
 * private ranges are not, except what the operator grants and the ports the
 * platform forwards. See docs/security.md.
 */
export class SandboxNetworks {
  constructor(
    readonly tools: NetworkTools,
    /** Names of this listener's namespaces start with it: a restart removes its leftovers, not another listener's. */
    private readonly prefix: string,
    private readonly grants: readonly EgressGrant[],
  ) {}

  /** Ports of the host's loopback the operator granted (forwarded by pasta rather than routed). */
  grantedLoopbackPorts(): number[] {
    return this.grants.map(loopbackPort).filter((port): port is number => port !== undefined);
  }

  async open(request: NamespaceRequest): Promise<SandboxNamespace> {
    const name = `${this.prefix}-${randomBytes(4).toString("hex")}`;
    const path = `${NETNS_DIR}/${name}`;
    const remove = () =>
      run(this.tools.ip, ["netns", "delete", name]).then(
        () => undefined,
        () => undefined,
      );
    let pasta: ChildProcess | undefined;
    try {
      await this.create(name);
      const loopbackPorts = [...new Set([...request.loopbackPorts, ...this.grantedLoopbackPorts()])];
      pasta = await this.connect(path, name, request.inboundPort, loopbackPorts);
    } catch (error) {
      pasta?.kill("SIGKILL");
      await remove();
      throw error;
    }
    const connected = pasta;
    let released: Promise<void> | undefined;
    return {
      path,
      release: () => {
        // Deleting the namespace's file also ends pasta; the kill is for a pasta that does not notice.
        released ??= remove().then(() => {
          connected.kill("SIGTERM");
        });
        return released;
      },
    };
  }

  /** Deletes the namespaces a previous run of this listener left (their pastas end with them). */
  async removeLeftovers(): Promise<number> {
    const { stdout } = await run(this.tools.ip, ["netns", "list"]);
    const names = stdout
      .split("\n")
      .map((line) => line.split(" ")[0] ?? "")
      .filter((name) => name.startsWith(`${this.prefix}-`));
    for (const name of names) await run(this.tools.ip, ["netns", "delete", name]).catch(() => undefined);
    return names.length;
  }

  /**
   * Adds the namespace, brings its loopback up and loads its firewall (read
   * from stdin) in one shell: each spawn blocks the listener's event loop for
   * a few milliseconds, and it routes every deployment's requests.
   */
  private async create(name: string): Promise<void> {
    const hostAddresses = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry !== undefined && entry.family === "IPv4")
      .map((entry) => entry!.address);
    const script = 'set -e; "$1" netns add "$3"; "$1" -n "$3" link set lo up; exec "$1" netns exec "$3" "$2" -f -';
    await new Promise<void>((resolve, reject) => {
      const child = execFile("/bin/sh", ["-c", script, "sh", this.tools.ip, this.tools.nft, name], (error, _out, stderr) =>
        error ? reject(new Error(`setting up the sandbox's network failed: ${stderr.trim() || error.message}`)) : resolve(),
      );
      // A step failing before nft reads the ruleset closes the pipe: the exit status says what failed.
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(egressRuleset(hostAddresses, this.grants));
    });
  }

  /** Starts pasta on the namespace and resolves once its route and forwarded ports are there. */
  private async connect(
    path: string,
    name: string,
    inboundPort: number | undefined,
    loopbackPorts: number[],
  ): Promise<ChildProcess> {
    const args = [
      "--foreground",
      "--quiet",
      "--netns",
      path,
      // pasta would switch to nobody, who may not enter the namespace.
      "--runas",
      "0:0",
      "--config-net",
      "--ipv4-only",
      // Otherwise the gateway's address leads to the host's loopback.
      "--no-map-gw",
      "--dns-forward",
      SANDBOX_DNS_ADDRESS,
      "--udp-ports",
      "none",
      "--udp-ns",
      "none",
      "--tcp-ports",
      inboundPort === undefined ? "none" : `127.0.0.1/${inboundPort}`,
      "--tcp-ns",
      loopbackPorts.length === 0 ? "none" : loopbackPorts.join(","),
    ];
    const pasta = spawn(this.tools.pasta, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    pasta.stderr?.on("data", (chunk: Buffer) => {
      // pasta also says it could not reach syslog: only its own words matter.
      stderr = `${stderr}${chunk}`
        .split("\n")
        .filter((line) => line && !line.includes("syslog"))
        .slice(-5)
        .join("\n");
    });
    const exited = new Promise<never>((_, reject) => {
      pasta.once("error", (error) => reject(new Error(`pasta could not start: ${error.message}`)));
      pasta.once("exit", (code, signal) =>
        reject(
          new Error(`pasta exited (${signal ?? `code ${code}`}) before the sandbox's network was up: ${stderr || "no output"}`),
        ),
      );
    });
    const portChecks = loopbackPorts.map((port) => ` && ss -Hltn 'sport = :${port}' | grep -q .`).join("");
    const ready = run(
      this.tools.ip,
      ["netns", "exec", name, "sh", "-c", `until ip route show default | grep -q .${portChecks}; do sleep 0.005; done`],
      { timeout: READY_TIMEOUT_MS },
    );
    try {
      await Promise.race([ready, exited]);
    } catch (error) {
      pasta.kill("SIGKILL");
      throw error;
    }
    exited.catch(() => undefined);
    return pasta;
  }
}
