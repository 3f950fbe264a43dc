import type { FastifyRequest } from "fastify";

/** Where the client reached us: the configured public URL, else its scheme, host and the /api-host prefix if it used it. */
export function baseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, "");
  const prefix = request.originalUrl.startsWith("/api-host/") ? "/api-host" : "";
  return `${request.protocol}://${request.host}${prefix}`;
}

/**
 * The control plane's own address in what it sends away and a browser comes
 * back to (OAuth redirect URIs): the configured public URL, else the address
 * it listens on. Never the request's Host header, which the caller chooses.
 */
export function ownBaseUrl(publicUrl: string | undefined, listenUrl: () => string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, "");
  const listening = listenUrl();
  if (!listening) throw new Error("the control plane's address is not known before it listens");
  return listening;
}
