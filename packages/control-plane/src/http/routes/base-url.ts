import type { FastifyRequest } from "fastify";

/** Where the client reached us: the configured public URL, else its scheme, host and the /api-host prefix if it used it. */
export function baseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, "");
  const prefix = request.originalUrl.startsWith("/api-host/") ? "/api-host" : "";
  return `${request.protocol}://${request.host}${prefix}`;
}
