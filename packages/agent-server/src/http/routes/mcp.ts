import type { Services } from "../../services/index.js";
import type { ServerInfo } from "./meta.js";
import type { RouteDef } from "./route-table.js";

export interface McpRouteOptions {
  info: ServerInfo;
}

/** `/mcp`: every assistant as a tool of a stateless MCP server (streamable HTTP, JSON replies). */
export function mcpRoutes(_services: Services, _options: McpRouteOptions): RouteDef[] {
  return [];
}
