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

/** fetch with the body read under the size cap; the same signal bounds connect, headers and body. */
export async function cappedFetch(url: string, init: RequestInit, options: OutboundOptions = {}): Promise<Response> {
  const response = await fetch(url, init);
  const body = await readCapped(response, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, url);
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
