import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";
import * as oauth from "oauth4webapi";
import { OAuthError, OAuthProviderError, OAuthResponseError, OAuthUrlError } from "./errors.js";

/** How this layer talks to providers. */
export interface OutboundOptions {
  /** Per request, body included. Default 10 s. */
  timeoutMs?: number;
  /** Cap on a response body (metadata documents, token responses). Default 256 KiB. */
  maxResponseBytes?: number;
  /** Allow plain http to hosts that are not loopback (a provider on a trusted private network). Loopback http is always allowed. */
  allowInsecureRequests?: boolean;
  /** The non-public addresses this layer may connect to (BERTH_OUTBOUND_ALLOW_PRIVATE); none when absent. */
  allowPrivate?: PrivateAddressAllowance;
}

/** What the operator lets the control plane reach beyond public addresses (docs/auth-service.md, "Private addresses"). */
export interface PrivateAddressAllowance {
  /** Every address. */
  all?: boolean;
  /** Host names reached whatever they resolve to (compared lower-case). */
  hosts?: readonly string[];
  /** Addresses and CIDRs (`10.1.0.0/16`, `127.0.0.1`, `fd00::/8`). */
  networks?: readonly string[];
}

/**
 * Addresses that are not the public internet's: loopback, private (RFC 1918,
 * fc00::/7), link-local (cloud metadata lives there), CGNAT, unspecified,
 * multicast and reserved. IPv4-mapped IPv6 addresses are checked as IPv4.
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, "ipv6");

/** An IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6 address as the IPv4 address it names. */
function embeddedIpv4(address: string): string | undefined {
  const canonical = URL.parse(`http://[${address}]`)?.hostname.slice(1, -1);
  const match = canonical && /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(canonical);
  if (!match) return undefined;
  const [high, low] = [Number.parseInt(match[1]!, 16), Number.parseInt(match[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** The address as the family it is checked in: IPv4-mapped IPv6 as IPv4. */
function normalized(address: string): { address: string; family: "ipv4" | "ipv6" } {
  if (isIP(address) === 4) return { address, family: "ipv4" };
  const ipv4 = embeddedIpv4(address);
  return ipv4 ? { address: ipv4, family: "ipv4" } : { address, family: "ipv6" };
}

/** The allowance's networks as a BlockList (built once per allowance). */
const allowedNetworks = new WeakMap<PrivateAddressAllowance, BlockList>();
function networksOf(allowance: PrivateAddressAllowance): BlockList {
  let list = allowedNetworks.get(allowance);
  if (!list) {
    list = new BlockList();
    for (const entry of allowance.networks ?? []) {
      const [network = "", prefix] = entry.split("/");
      const family = isIP(network) === 6 ? "ipv6" : "ipv4";
      list.addSubnet(network, prefix === undefined ? (family === "ipv4" ? 32 : 128) : Number(prefix), family);
    }
    allowedNetworks.set(allowance, list);
  }
  return list;
}

/** Whether `address` (what `hostname` resolved to) may be connected to. */
export function isAddressAllowed(address: string, hostname: string, allowance: PrivateAddressAllowance = {}): boolean {
  const { address: checked, family } = normalized(address);
  if (!NON_PUBLIC.check(checked, family)) return true;
  if (allowance.all) return true;
  if (allowance.hosts?.includes(bareHost(hostname))) return true;
  const networks = networksOf(allowance);
  return networks.check(checked, family) || (checked !== address && networks.check(address, "ipv6"));
}

/** A URL's hostname without IPv6 brackets, lower-case. */
const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();

const refusedAddress = (label: string, url: URL, address: string) =>
  new OAuthUrlError(
    `${label} ${url.href} resolves to ${address}, a loopback, private or link-local address the control plane does not call ` +
      "(the operator allows such addresses with BERTH_OUTBOUND_ALLOW_PRIVATE)",
  );

/** Resolves as the connection will, refusing (the error names the address) when any address is not allowed. */
function guardedLookup(url: URL, label: string, allowance: PrivateAddressAllowance | undefined): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      const refused = addresses.find((candidate) => !isAddressAllowed(candidate.address, hostname, allowance));
      if (refused) return callback(refusedAddress(label, url, refused.address), "", 0);
      if (options.all) return (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * Checks where `url` leads before it is configured (a provider's endpoints):
 * its host resolved, every address must be public or allowed (OAuthUrlError otherwise).
 * Requests check again as they connect (guardedFetch), to the address they checked.
 */
export async function checkDestination(url: URL, label: string, options: OutboundOptions = {}): Promise<void> {
  const host = bareHost(url.hostname);
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve) =>
        dnsLookup(host, { all: true }, (error, found) => resolve(error ? [] : found.map((entry) => entry.address))),
      );
  // A name that does not resolve now is not refused here: the request will say it is unreachable.
  const refused = addresses.find((address) => !isAddressAllowed(address, host, options.allowPrivate));
  if (refused) throw refusedAddress(label, url, refused);
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024;

/** Loopback hosts: local providers and the tests' providers speak plain http. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** `raw` as a URL this layer may call or send a user to; `label` names it in the error. */
export function checkUrl(raw: string | URL, label: string, options: OutboundOptions = {}): URL {
  const url = URL.parse(String(raw));
  if (!url) throw new OAuthUrlError(`${label} is not a valid URL: ${String(raw)}`);
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new OAuthUrlError(`${label} must be an http(s) URL: ${url.href}`);
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname) && !options.allowInsecureRequests)
    throw new OAuthUrlError(`${label} must use https (plain http is allowed for loopback hosts only): ${url.href}`);
  return url;
}

/** A fresh timeout signal; `AbortSignal.timeout` does not keep the process alive. */
export function timeoutSignal(options: OutboundOptions = {}): AbortSignal {
  return AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
}

/** Reads a body up to `limit` bytes, so a hostile endpoint cannot make us buffer without end. */
async function readCapped(response: Response, limit: number, url: string): Promise<Buffer<ArrayBuffer> | null> {
  if (!response.body) return null;
  const tooLarge = () => new OAuthResponseError(`${url} answered more than ${limit} bytes`);
  if (Number(response.headers.get("content-length") ?? 0) > limit) {
    await response.body.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * fetch for this layer: the host is resolved and every address checked
 * (isAddressAllowed) by the connection itself, which then connects to the
 * address it checked: a name that resolves anew to another address (DNS
 * rebinding) cannot slip past. Redirects are never followed (they are
 * answered as they are). The signal bounds connect, headers and body.
 */
export async function guardedFetch(url: string, init: RequestInit, options: OutboundOptions = {}): Promise<Response> {
  const target = new URL(url);
  const label = "the URL";
  const host = bareHost(target.hostname);
  // An address literal is connected to as it is, without a lookup: checked here.
  if (isIP(host) && !isAddressAllowed(host, host, options.allowPrivate)) throw refusedAddress(label, target, host);
  const request = new Request(target, { ...init, signal: null });
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = Object.fromEntries(request.headers);
  if (body) headers["content-length"] = String(body.byteLength);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  return new Promise<Response>((resolve, reject) => {
    let incomingMessage: http.IncomingMessage | undefined;
    const client = target.protocol === "https:" ? https : http;
    const outgoing = client.request(
      target,
      { method: request.method, headers, agent: false, lookup: guardedLookup(target, label, options.allowPrivate) },
      (incoming) => {
        incomingMessage = incoming;
        const answered = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) {
          for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) answered.append(name, item);
        }
        const status = incoming.statusCode ?? 502;
        const noBody = [204, 205, 304].includes(status) || request.method === "HEAD";
        if (noBody) incoming.resume();
        resolve(
          new Response(noBody ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), {
            status,
            statusText: incoming.statusMessage ?? "",
            headers: answered,
          }),
        );
      },
    );
    // The signal also bounds the body, read after this resolves: it errors the body's stream with the signal's reason.
    signal?.addEventListener(
      "abort",
      () => {
        incomingMessage?.destroy(signal.reason as Error);
        outgoing.destroy(signal.reason as Error);
      },
      { once: true },
    );
    outgoing.on("error", (error) => {
      if (signal?.aborted) reject(signal.reason);
      else if (error instanceof OAuthError) reject(error);
      else reject(new TypeError("fetch failed", { cause: error }));
    });
    outgoing.end(body);
  });
}

/** guardedFetch with the body read under the size cap; the same signal bounds connect, headers and body. */
export async function cappedFetch(url: string, init: RequestInit, options: OutboundOptions = {}): Promise<Response> {
  const response = await guardedFetch(url, init, options);
  const body = await readCapped(response, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, url).catch((error: unknown) => {
    if (error instanceof OAuthError) throw error;
    if (init.signal?.aborted) throw init.signal.reason;
    throw new TypeError("fetch failed", { cause: error });
  });
  const { status, statusText, headers } = response;
  return new Response([204, 205, 304].includes(status) ? null : body, { status, statusText, headers });
}

/** oauth4webapi's transport options for a request to `url` (already passed through checkUrl). */
export function libraryOptions(url: URL, options: OutboundOptions = {}) {
  return {
    signal: () => timeoutSignal(options),
    [oauth.customFetch]: (target: string, init: oauth.CustomFetchOptions<string, unknown>) =>
      cappedFetch(target, init as RequestInit, options),
    // oauth4webapi refuses http unless told; checkUrl has already limited http to loopback or an explicit opt-in.
    [oauth.allowInsecureRequests]: url.protocol === "http:",
  };
}

/** Runs a request to `endpoint`, turning oauth4webapi's and fetch's failures into this layer's errors. */
export async function talkTo<T>(endpoint: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw translate(endpoint, error);
  }
}

function translate(endpoint: string, error: unknown): unknown {
  if (error instanceof OAuthError) return error;
  if (error instanceof oauth.ResponseBodyError)
    return new OAuthProviderError(error.error, error.error_description ?? null, error.status, endpoint);
  if (error instanceof oauth.WWWAuthenticateChallengeError)
    return new OAuthResponseError(`${endpoint} answered HTTP ${error.status} with an authentication challenge`);
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError"))
    return new OAuthResponseError(`${endpoint} did not answer in time`);
  if (error instanceof oauth.OperationProcessingError || error instanceof oauth.UnsupportedOperationError)
    return new OAuthResponseError(`${endpoint}: ${error.message}`);
  if (error instanceof TypeError && error.message === "fetch failed") {
    const cause = error.cause instanceof Error ? error.cause.message : "network error";
    return new OAuthResponseError(`${endpoint} is unreachable: ${cause}`);
  }
  return error;
}
