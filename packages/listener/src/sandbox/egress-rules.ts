import { BlockList, isIPv4 } from "node:net";
import { NON_PUBLIC_IPV4_RANGES } from "@berth/listener-protocol";

/**
 * The address DNS queries go to inside a sandbox: pasta answers it by
 * forwarding to the host's resolver, which often lives at a loopback or
 * private address the sandbox may not reach itself.
 */
export const SANDBOX_DNS_ADDRESS = "169.254.1.53";

/** A destination the operator grants sandboxes besides the internet: an address or CIDR block, optionally one port. */
export interface EgressGrant {
  /** An IPv4 address or CIDR block (a.b.c.d/n). */
  network: string;
  port?: number;
}

/**
 * `BERTH_SANDBOX_EGRESS_ALLOW`: comma-separated `ADDRESS[:PORT]` or
 * `CIDR[:PORT]` entries (IPv4). Throws naming the entry that is not one.
 */
export function parseEgressGrants(text: string | undefined): EgressGrant[] {
  const grants: EgressGrant[] = [];
  for (const entry of (text ?? "").split(",").map((part) => part.trim())) {
    if (entry === "") continue;
    const match = /^(\d{1,3}(?:\.\d{1,3}){3})(?:\/(\d{1,2}))?(?::(\d{1,5}))?$/.exec(entry);
    const bits = match?.[2] === undefined ? 32 : Number(match[2]);
    const port = match?.[3] === undefined ? undefined : Number(match[3]);
    if (!match || !isIPv4(match[1]!) || bits > 32 || (port !== undefined && (port < 1 || port > 65535))) {
      throw new Error(
        `BERTH_SANDBOX_EGRESS_ALLOW: "${entry}" is not an IPv4 address or CIDR block with an optional port (10.0.0.5:443, 10.1.0.0/16)`,
      );
    }
    grants.push({ network: `${match[1]}/${bits}`, ...(port === undefined ? {} : { port }) });
  }
  return grants;
}

/** Whether a grant is a port of the host's loopback: those go through pasta's loopback forwarding, not a route. */
export function loopbackPort(grant: EgressGrant): number | undefined {
  const [address, bits] = grant.network.split("/");
  return grant.port !== undefined && bits === "32" && isLoopback(address!) ? grant.port : undefined;
}

export function isLoopback(address: string): boolean {
  const loopback = new BlockList();
  loopback.addSubnet("127.0.0.0", 8, "ipv4");
  return isIPv4(address) && loopback.check(address, "ipv4");
}

/**
 * The nftables ruleset loaded into a sandbox's network namespace (before any
 * of its code runs; the sandbox has no capability to change it): traffic on
 * its own loopback passes, DNS to pasta's forwarder passes, the operator's
 * grants pass, then the blocked ranges, the host's own addresses and all of
 * IPv6 are refused with a reset, so a connection fails at once.
 */
export function egressRuleset(hostAddresses: readonly string[], grants: readonly EgressGrant[]): string {
  const accept = grants
    .filter((grant) => loopbackPort(grant) === undefined)
    .map((grant) =>
      grant.port === undefined
        ? `    ip daddr ${grant.network} accept`
        : `    ip daddr ${grant.network} meta l4proto { tcp, udp } th dport ${grant.port} accept`,
    );
  const ranges = new BlockList();
  for (const range of NON_PUBLIC_IPV4_RANGES) {
    const [network, bits] = range.split("/");
    ranges.addSubnet(network!, Number(bits), "ipv4");
  }
  // An address inside a blocked range would overlap it, which nftables refuses in one set.
  const host = hostAddresses.filter((address) => isIPv4(address) && !ranges.check(address, "ipv4"));
  const blocked = [...NON_PUBLIC_IPV4_RANGES, ...new Set(host)];
  return [
    "table inet berth_sandbox {",
    "  chain output {",
    "    type filter hook output priority 0; policy accept;",
    '    oifname "lo" accept',
    `    ip daddr ${SANDBOX_DNS_ADDRESS} meta l4proto { tcp, udp } th dport 53 accept`,
    ...accept,
    "    meta nfproto ipv6 reject",
    `    ip daddr { ${blocked.join(", ")} } meta l4proto tcp reject with tcp reset`,
    `    ip daddr { ${blocked.join(", ")} } reject`,
    "  }",
    "}",
    "",
  ].join("\n");
}
