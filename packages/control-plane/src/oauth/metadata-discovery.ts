import * as oauth from "oauth4webapi";
import { OAuthDiscoveryError, OAuthResponseError } from "./errors.js";
import { cappedFetch, checkUrl, guardedFetch, libraryOptions, type OutboundOptions, talkTo, timeoutSignal } from "./outbound.js";
import { readFields } from "./response-body.js";
import { resourceMetadataFromChallenge } from "./www-authenticate.js";

/** RFC 9728 protected-resource metadata, the fields this layer uses. */
export interface ProtectedResourceMetadata {
  /** The resource identifier (RFC 8707 `resource` value). */
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  /** Where it was read. */
  url: string;
}

const strings = (value: unknown) =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string" && item !== "") : [];

/**
 * The well-known URLs of a server's protected-resource metadata, in the order
 * RFC 9728 §3.1 and the MCP spec try them: path-inserted, then the origin's.
 */
export function protectedResourceMetadataUrls(serverUrl: URL): URL[] {
  const root = new URL("/.well-known/oauth-protected-resource", serverUrl.origin);
  const path = serverUrl.pathname.replace(/\/$/, "");
  if (!path) return [root];
  return [new URL(`/.well-known/oauth-protected-resource${path}`, serverUrl.origin), root];
}

/** GETs a metadata document: its fields when it answered 200 with a JSON object, else null. */
async function getDocument(url: URL, options: OutboundOptions): Promise<Record<string, unknown> | null> {
  return talkTo(`${url.href}`, async () => {
    const response = await cappedFetch(
      url.href,
      { headers: { accept: "application/json" }, redirect: "manual", signal: timeoutSignal(options) },
      options,
    );
    if (response.status !== 200) {
      await response.body?.cancel();
      return null;
    }
    return readFields(response);
  });
}

/** The resource_metadata URL an unauthenticated request to the server is challenged with, if any (RFC 9728 §5). */
async function challengedMetadataUrl(serverUrl: URL, options: OutboundOptions): Promise<string | null> {
  return talkTo(`the MCP server ${serverUrl.href}`, async () => {
    // Headers are all that matters; the body (an SSE stream, possibly) is dropped unread.
    const response = await guardedFetch(
      serverUrl.href,
      { headers: { accept: "application/json, text/event-stream" }, redirect: "manual", signal: timeoutSignal(options) },
      options,
    );
    await response.body?.cancel();
    return response.status === 401 ? resourceMetadataFromChallenge(response.headers.get("www-authenticate")) : null;
  });
}

function readResourceMetadata(fields: Record<string, unknown>, serverUrl: URL, url: URL): ProtectedResourceMetadata {
  const resource = typeof fields.resource === "string" ? URL.parse(fields.resource) : null;
  if (!resource) throw new OAuthResponseError(`${url.href} names no valid "resource"`);
  // RFC 9728 §3.3 wants the very URL; MCP servers name their endpoint or their origin.
  // The same origin is what keeps one server from vouching for another.
  if (resource.origin !== serverUrl.origin)
    throw new OAuthResponseError(`${url.href} describes ${resource.href}, another server than ${serverUrl.href}`);
  return {
    resource: fields.resource as string,
    authorization_servers: strings(fields.authorization_servers),
    scopes_supported: strings(fields.scopes_supported),
    url: url.href,
  };
}

/**
 * The MCP server's protected-resource metadata (RFC 9728): from the URL its
 * 401 challenge names, else from the well-known URLs. Null when it has none.
 */
export async function discoverProtectedResource(
  serverUrl: URL,
  options: OutboundOptions = {},
): Promise<ProtectedResourceMetadata | null> {
  const challenged = await challengedMetadataUrl(serverUrl, options);
  const wellKnown = protectedResourceMetadataUrls(serverUrl);
  // The challenge's URL first (RFC 9728 §5); the well-known ones still serve when it leads nowhere.
  const candidates = challenged ? [checkUrl(challenged, "the resource_metadata URL", options), ...wellKnown] : wellKnown;
  for (const url of candidates) {
    const fields = await getDocument(url, options);
    if (fields) return readResourceMetadata(fields, serverUrl, url);
  }
  return null;
}

/**
 * An authorization server's metadata: RFC 8414 first, then OpenID Connect
 * Discovery. The document's issuer must be the one asked for (RFC 8414 §3.3).
 */
export async function discoverAuthorizationServer(
  issuer: URL,
  options: OutboundOptions = {},
): Promise<oauth.AuthorizationServer> {
  for (const algorithm of ["oauth2", "oidc"] as const) {
    const metadata = await talkTo(`the authorization server ${issuer.href}`, async () => {
      const response = await oauth.discoveryRequest(issuer, { algorithm, ...libraryOptions(issuer, options) });
      if (response.status !== 200) {
        await response.body?.cancel();
        return null;
      }
      return oauth.processDiscoveryResponse(issuer, response);
    });
    if (metadata) return metadata;
  }
  throw new OAuthDiscoveryError(`the authorization server ${issuer.href} publishes no OAuth or OpenID metadata`);
}
