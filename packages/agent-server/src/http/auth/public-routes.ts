import { servedWithoutKey } from "@berth/service-kit";
import { isUiAssetRequest } from "../ui-public.js";

/**
 * Requests a project's `authenticate` never sees, whichever server answers
 * them (Berth's API or the project's app in front of it): preflights, health,
 * the API's pages, `GET /info` and the UI's assets.
 */
export function servedWithoutAuthentication(method: string, path: string): boolean {
  return (
    method === "OPTIONS" ||
    servedWithoutKey(method, path) ||
    (method === "GET" && path === "/info") ||
    isUiAssetRequest(method, path)
  );
}
