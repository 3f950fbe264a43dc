import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from "node:http";

/** Headers about one connection, never forwarded (RFC 9110 §7.6.1), plus the ones Node answers itself. */
const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/** Where the API key was found: that header is the platform's credential and is not passed to the deployment's code. */
export type Credential = "x-api-key" | "authorization";

export function apiKeyOf(headers: IncomingHttpHeaders): { key: string; from: Credential } | undefined {
  const header = headers["x-api-key"];
  const key = (Array.isArray(header) ? header[0] : header)?.trim();
  if (key) return { key, from: "x-api-key" };
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "");
  return bearer?.[1] ? { key: bearer[1], from: "authorization" } : undefined;
}

/** Hop-by-hop headers and those named in `Connection`. */
function droppedBy(headers: IncomingHttpHeaders): Set<string> {
  const dropped = new Set(HOP_BY_HOP);
  for (const token of (headers.connection ?? "").split(",")) if (token.trim()) dropped.add(token.trim().toLowerCase());
  return dropped;
}

/**
 * The headers sent upstream: the client's, without hop-by-hop ones, without
 * the API key the router consumed (callers' platform keys are not the
 * deployment's business), plus X-Forwarded-*. An X-Forwarded-Proto/-Host from
 * a TLS terminator in front is kept; the prefix is appended to its own.
 */
export function upstreamHeaders(
  request: IncomingMessage,
  prefix: string,
  credential: Credential | undefined,
): OutgoingHttpHeaders {
  const incoming = request.headers;
  const dropped = droppedBy(incoming);
  // Node already answered `100 Continue` to the client; Host is the target's.
  dropped.add("expect").add("host").add("x-api-key");
  if (credential === "authorization") dropped.add("authorization");
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) if (value !== undefined && !dropped.has(name)) headers[name] = value;
  // A chunked body stays chunked: without the header Node would send a GET/DELETE body unframed.
  if (incoming["transfer-encoding"] && !incoming["content-length"]) headers["transfer-encoding"] = "chunked";
  const client = request.socket.remoteAddress ?? "";
  const forwardedFor = incoming["x-forwarded-for"];
  headers["x-forwarded-for"] = forwardedFor ? `${forwardedFor}, ${client}` : client;
  headers["x-forwarded-proto"] = incoming["x-forwarded-proto"] ?? "http";
  headers["x-forwarded-host"] = incoming["x-forwarded-host"] ?? incoming.host ?? "";
  headers["x-forwarded-prefix"] = `${first(incoming["x-forwarded-prefix"])?.replace(/\/+$/, "") ?? ""}${prefix}`;
  return headers;
}

/** The upstream response's headers, without hop-by-hop ones (Node frames the body to the client itself). */
export function downstreamHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const dropped = droppedBy(headers);
  const result: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !dropped.has(name)) result[name] = value;
  return result;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
