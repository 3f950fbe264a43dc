import type { Services } from "../../services/index.js";
import type { ServerInfo } from "./meta.js";
import type { RouteDef } from "./route-table.js";

export interface A2aRouteOptions {
  info: ServerInfo;
  mountPrefix?: string;
}

/** `/a2a/{assistant_id}` and the agent cards: each assistant as an A2A agent whose contexts are threads. */
export function a2aRoutes(_services: Services, _options: A2aRouteOptions): RouteDef[] {
  return [];
}
