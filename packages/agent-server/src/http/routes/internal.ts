import { z } from "zod";
import { defineRoute } from "@berth/service-kit";
import type { MaintenanceService } from "../../services/maintenance.js";
import { TruncateBodySchema } from "../schemas/internal.js";
import type { RouteContext } from "./context.js";

/**
 * `POST /internal/truncate`, for conformance suites that reset a server
 * between tests. Registered only when the operator enables it: it empties
 * the database in one request.
 */
export function registerInternalRoutes({ app, catalog }: RouteContext, maintenance: MaintenanceService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/internal/truncate",
      summary: "Empty runs, threads, assistants (not the graphs' own), checkpoints and the store (test servers only)",
      tag: "internal",
      body: TruncateBodySchema,
      bodyOptional: true,
      responses: { 200: { description: "Emptied", schema: z.object({ ok: z.literal(true) }) } },
    },
    async ({ body }) => {
      await maintenance.truncate(body);
      return { ok: true };
    },
  );
}
