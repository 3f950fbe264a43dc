import type { FastifyRequest } from "fastify";

function first(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text?.split(",")[0]?.trim() || undefined;
}

/**
 * Where clients reach this server's A2A endpoint of `assistantId`: under
 * LANGGRAPH_API_URL when set, else as the request arrived: a proxy's
 * X-Forwarded-Proto/-Host/-Prefix first (Berth's router sets all three, the
 * prefix being the deployment's `/d/<name>`), then `http.mount_prefix`.
 */
export function a2aUrl(request: FastifyRequest, assistantId: string, options: { apiUrl?: string; mountPrefix?: string }): string {
  const path = `/a2a/${encodeURIComponent(assistantId)}`;
  if (options.apiUrl) return `${options.apiUrl.replace(/\/+$/, "")}${path}`;
  const headers = request.headers;
  const scheme = first(headers["x-forwarded-proto"]) ?? request.protocol;
  const host = first(headers["x-forwarded-host"]) ?? headers.host ?? "localhost";
  const forwardedPrefix = first(headers["x-forwarded-prefix"]) ?? "";
  const prefix = forwardedPrefix.startsWith("/") ? forwardedPrefix.replace(/\/+$/, "") : "";
  return `${scheme}://${host}${prefix}${options.mountPrefix ?? ""}${path}`;
}
