import { createHash, timingSafeEqual } from "node:crypto";
import { servedWithoutKey } from "@berth/service-kit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { isUiAssetRequest } from "./ui-public.js";

const digest = (key: string) => createHash("sha256").update(key).digest();

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers["x-api-key"];
  const key = Array.isArray(header) ? header[0] : header;
  if (key) return key.trim();
  const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization?.trim() ?? "");
  return bearer?.[1]?.trim();
}

/**
 * `BERTH_API_KEY`: every request must carry that key (`X-Api-Key`, or
 * `Authorization: Bearer`), except CORS preflights, the health check, the API's docs and `ui` bundles' files.
 * Compared as digests in constant time.
 */
export function installApiKeyGuard(app: FastifyInstance, apiKey: string): void {
  const expected = digest(apiKey);
  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?", 1)[0]!;
    if (request.method === "OPTIONS" || servedWithoutKey(request.method, path) || isUiAssetRequest(request.method, path)) return;
    const key = presentedKey(request);
    if (!key) return reply.status(401).send({ detail: "Missing API key: send X-Api-Key (or Authorization: Bearer <key>)" });
    if (!timingSafeEqual(digest(key), expected)) return reply.status(401).send({ detail: "Invalid API key" });
  });
}
