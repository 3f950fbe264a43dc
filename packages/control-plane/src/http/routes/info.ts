import { defineRoute } from "@berth/service-kit";
import { ServerInfo } from "../schemas/info.js";
import type { RouteContext } from "./context.js";

/** `GET /info`, open without a key: the version the dashboard shows and an operator checks after an upgrade. */
export function registerInfoRoute({ app, catalog }: RouteContext, version: string): void {
  const info = { version, server: "berth" as const, service: "control-plane" as const };
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/info",
      summary: "Berth's version",
      tag: "Server",
      responses: { 200: { description: "The version of the Berth serving this API", schema: ServerInfo } },
    },
    async () => info,
  );
}
