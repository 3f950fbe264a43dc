import { z } from "zod";
import type { MaintenanceService } from "../../services/maintenance.js";
import { TruncateBodySchema } from "../schemas/internal.js";
import { type RouteDef, route } from "./route-table.js";

/**
 * `POST /internal/truncate`, for conformance suites that reset a server
 * between tests. Registered only when the operator enables it: it empties
 * the database in one request.
 */
export function internalRoutes(maintenance: MaintenanceService): RouteDef[] {
  return [
    route(
      {
        method: "POST",
        path: "/internal/truncate",
        summary: "Empty runs, threads, assistants (not the graphs' own), checkpoints and the store (test servers only)",
        body: TruncateBodySchema,
        bodyOptional: true,
        responses: { 200: { description: "Emptied", schema: z.object({ ok: z.literal(true) }) } },
      },
      async ({ body }) => {
        await maintenance.truncate(body);
        return { ok: true };
      },
    ),
  ];
}
