import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { isIPv4 } from "node:net";
import { promisify } from "node:util";
import { NON_PUBLIC_IPV4_RANGES } from "@berth/listener-protocol";

const run = promisify(execFile);

/** A TCP service containers may reach although it is on the host or in a private range. */
export interface Endpoint {
  address: string;
  port: number;
}

const DNS = ["udp", "tcp"].map((protocol) => ["-p", protocol, "--dport", "53"]);

/**
 * The host's packet filter rules that keep the containers of one engine
 * bridge to themselves and the internet: per bridge, a chain for what they
 * send through the host (the FORWARD path, from Docker's DOCKER-USER chain)
 * and one for what they send to the host itself (INPUT), both matched by the
 * bridge's interface name, so nothing else on the host is filtered. What
 * containers send through the host to its own network and the private ranges
 * is refused (except DNS to the host's resolvers), what they send to the host
 * is refused (except answers and DNS to the bridge's gateway, where podman's
 * resolver listens), and IPv6 from the bridge is refused both ways.
 * Other exceptions: the endpoints given (the control plane's tracing API and
 * Auth Service, at the address and port deployments are told).
 * Installing is idempotent and atomic (each chain is replaced whole, with
 * iptables-restore, and a jump added once) and serialized per bridge;
 * releasing removes both.
 */
export class HostFirewall {
  private readonly queue = new Map<string, Promise<unknown>>();

  constructor(
    /** The resolvers containers' DNS goes to (the host's, as the engine's resolver forwards to them). */
    private readonly resolvers: readonly string[],
  ) {}

  /**
   * Keeps `bridge`'s containers off the host and the private ranges but for
   * `allowed`; `gateway` is the bridge's address on the host.
   */
  isolate(bridge: string, gateway: string | undefined, allowed: readonly Endpoint[] = []): Promise<void> {
    return this.serialized(bridge, async () => {
      const { forward, input } = chainsOf(bridge);
      const forwardParent = (await chainExists("iptables", "DOCKER-USER")) ? "DOCKER-USER" : "FORWARD";
      const exceptions = allowed
        .filter((endpoint) => isIPv4(endpoint.address))
        .map((endpoint) => ["-d", `${endpoint.address}/32`, "-p", "tcp", "--dport", String(endpoint.port), "-j", "RETURN"]);
      const answers = ["-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "RETURN"];
      await replaceChains("iptables", {
        [forward]: [
          // Its own containers, and the answers to what they were asked.
          ["-o", bridge, "-j", "RETURN"],
          answers,
          ...this.resolvers.flatMap((resolver) => DNS.map((dns) => ["-d", `${resolver}/32`, ...dns, "-j", "RETURN"])),
          ...exceptions,
          ...NON_PUBLIC_IPV4_RANGES.flatMap((range) => refusal("icmp-admin-prohibited").map((rule) => ["-d", range, ...rule])),
        ],
        [input]: [
          answers,
          ...(gateway ? DNS.map((dns) => ["-d", `${gateway}/32`, ...dns, "-j", "RETURN"]) : []),
          ...exceptions,
          ...refusal("icmp-admin-prohibited"),
        ],
      });
      await jumpOnce("iptables", forwardParent, bridge, forward);
      await jumpOnce("iptables", "INPUT", bridge, input);
      // Berth's networks have no IPv6: only link-local addresses, which would reach the host's services.
      const refuse6 = [answers, ...refusal("icmp6-adm-prohibited")];
      await replaceChains("ip6tables", { [forward]: refuse6, [input]: refuse6 });
      await jumpOnce("ip6tables", "FORWARD", bridge, forward);
      await jumpOnce("ip6tables", "INPUT", bridge, input);
    });
  }

  /** Removes `bridge`'s rules; quietly when they are gone already. */
  release(bridge: string): Promise<void> {
    return this.serialized(bridge, async () => {
      const { forward, input } = chainsOf(bridge);
      for (const tool of ["iptables", "ip6tables"] as const) {
        for (const [parent, chain] of [
          ["DOCKER-USER", forward],
          ["FORWARD", forward],
          ["INPUT", input],
        ] as const) {
          while (await succeeds(tool, ["-D", parent, "-i", bridge, "-j", chain]));
        }
        for (const chain of [forward, input]) {
          await succeeds(tool, ["-F", chain]);
          await succeeds(tool, ["-X", chain]);
        }
      }
    });
  }

  private serialized(bridge: string, work: () => Promise<void>): Promise<void> {
    const previous = this.queue.get(bridge) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(work);
    this.queue.set(bridge, next);
    void next
      .catch(() => {})
      .then(() => {
        if (this.queue.get(bridge) === next) this.queue.delete(bridge);
      });
    return next;
  }
}

/**
 * Refused rather than dropped, so a connection fails at once: TCP with a reset (the kernel rate-limits ICMP
 * errors per destination, and a burst of refused connections would otherwise wait out their timeouts), the rest
 * with an ICMP error.
 */
function refusal(icmp: string): string[][] {
  return [
    ["-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
    ["-j", "REJECT", "--reject-with", icmp],
  ];
}

/** The chains of a bridge: named after its interface (at most 15 characters, so within iptables' 28). */
export function chainsOf(bridge: string): { forward: string; input: string } {
  return { forward: `BERTH-F-${bridge}`, input: `BERTH-I-${bridge}` };
}

/**
 * The firewall a listener uses for an engine (BERTH_CONTAINER_FIREWALL):
 * `iptables` requires it (the listener fails at start without it), `off`
 * leaves the host's rules alone, unset uses it when it can: an engine on
 * this machine (a Unix socket), run as root, with iptables. Returns the
 * reason when there is none.
 */
export async function hostFirewallFor(address: string, setting: string): Promise<{ firewall?: HostFirewall; reason?: string }> {
  if (setting === "off") return { reason: "BERTH_CONTAINER_FIREWALL=off" };
  if (setting !== "" && setting !== "iptables")
    throw new Error(`BERTH_CONTAINER_FIREWALL must be iptables or off, not ${JSON.stringify(setting)}`);
  const local = address.startsWith("unix://") || address.startsWith("/");
  const usable = local && process.getuid?.() === 0 && (await succeeds("iptables", ["-n", "-L", "INPUT"]));
  if (usable) return { firewall: new HostFirewall(await hostResolvers()) };
  const reason = !local
    ? `the engine at ${address} is not on this machine`
    : process.getuid?.() !== 0
      ? "the listener does not run as root"
      : "iptables does not work here";
  if (setting === "iptables") throw new Error(`BERTH_CONTAINER_FIREWALL=iptables, but ${reason}`);
  return { reason };
}

/** The IPv4 resolvers of the host's /etc/resolv.conf, loopback ones left out (the engine does not forward to those). */
async function hostResolvers(): Promise<string[]> {
  const text = await readFile("/etc/resolv.conf", "utf8").catch(() => "");
  return [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)]
    .map((match) => match[1]!)
    .filter((address) => isIPv4(address) && !address.startsWith("127."));
}

type Tool = "iptables" | "ip6tables";

async function iptables(tool: Tool, args: string[]): Promise<void> {
  try {
    // -w: wait for the lock the engine's own rule changes hold.
    await run(tool, ["-w", ...args]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`${tool} ${args.join(" ")} failed: ${stderr || (error as Error).message}`);
  }
}

async function succeeds(tool: Tool, args: string[]): Promise<boolean> {
  return iptables(tool, args).then(
    () => true,
    () => false,
  );
}

function chainExists(tool: Tool, chain: string): Promise<boolean> {
  return succeeds(tool, ["-n", "-L", chain]);
}

/**
 * Creates the chains, or replaces their rules, in one commit of the filter
 * table: no packet ever meets a chain half filled.
 */
async function replaceChains(tool: Tool, chains: Record<string, string[][]>): Promise<void> {
  const lines = ["*filter", ...Object.keys(chains).map((chain) => `:${chain} - [0:0]`)];
  for (const [chain, rules] of Object.entries(chains)) for (const rule of rules) lines.push(["-A", chain, ...rule].join(" "));
  lines.push("COMMIT", "");
  const restore = `${tool}-restore`;
  await new Promise<void>((resolve, reject) => {
    const child = execFile(restore, ["-w", "--noflush"], (error, _stdout, stderr) =>
      error ? reject(new Error(`${restore} failed: ${stderr.trim() || error.message}`)) : resolve(),
    );
    child.stdin?.end(lines.join("\n"));
  });
}

async function jumpOnce(tool: Tool, parent: string, bridge: string, chain: string): Promise<void> {
  const jump = ["-i", bridge, "-j", chain];
  if (!(await succeeds(tool, ["-C", parent, ...jump]))) await iptables(tool, ["-I", parent, "1", ...jump]);
}
