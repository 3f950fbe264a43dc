import { z } from "zod";
import { defineRoute } from "@berth/service-kit";
import type { RouteContext } from "./context.js";

/** `GET /ok`: with the meta routes, or alone when they are switched off (`http.disable_meta`): health checks still need it. */
export function registerHealthRoute({ app, catalog }: RouteContext): void {
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/ok",
      summary: "Liveness",
      tag: "meta",
      responses: { 200: { description: "Always ok", schema: z.object({ ok: z.boolean() }) } },
    },
    async () => ({ ok: true }),
  );
}
