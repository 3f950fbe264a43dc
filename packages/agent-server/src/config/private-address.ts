import { isIP } from "node:net";

/** IPv4 ranges a webhook may not reach by default: this network, private, CGNAT, loopback, link-local, multicast, reserved. */
const PRIVATE_V4: [number, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
].map(([base, bits]) => [v4ToNumber(base as string), bits as number]);

function v4ToNumber(address: string): number {
  return address.split(".").reduce((value, octet) => value * 256 + Number(octet), 0);
}

function isPrivateV4(address: string): boolean {
  const value = v4ToNumber(address);
  return PRIVATE_V4.some(([base, bits]) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
}

/** The first 16 bits of an IPv6 address, or its embedded IPv4 address (::ffff:a.b.c.d, ::a.b.c.d). */
function isPrivateV6(address: string): boolean {
  const lower = address.toLowerCase();
  const embedded = /^::(ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (embedded) return isPrivateV4(embedded[2]);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (mapped) {
    const high = Number.parseInt(mapped[1], 16);
    const low = Number.parseInt(mapped[2], 16);
    return isPrivateV4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  if (lower === "::" || lower === "::1") return true;
  const first = Number.parseInt(lower.split(":")[0] || "0", 16);
  // fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/** Whether an IP address is private, loopback, link-local or otherwise not on the public internet. */
export function isPrivateAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return isPrivateV4(address);
  if (version === 6) return isPrivateV6(address);
  return false;
}

/** Whether a URL's host (as `URL.hostname` gives it: IPv6 in brackets) names this machine or a private address without DNS. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isPrivateAddress(host);
}
