import { z } from "zod";
import { type RouteDef, route } from "./route-table.js";

/** `GET /ok`: with the meta routes, or alone when they are switched off (`http.disable_meta`): health checks still need it. */
export const healthRoute: RouteDef = route(
  {
    method: "GET",
    path: "/ok",
    summary: "Liveness",
    responses: { 200: { description: "Always ok", schema: z.object({ ok: z.boolean() }) } },
  },
  async () => ({ ok: true }),
);
