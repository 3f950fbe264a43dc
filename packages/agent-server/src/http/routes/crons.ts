import { z } from "zod";
import type { CronService } from "../../services/crons.js";
import type { Cron } from "../../storage/cron-types.js";
import {
  CronSchema,
  CronCountSchema,
  CronCreateSchema,
  CronIdParamsSchema,
  CronPatchSchema,
  CronSearchSchema,
  type CRON_SELECT_FIELDS,
} from "../schemas/crons.js";
import { ThreadIdParamsSchema } from "../schemas/threads.js";
import { accessOf } from "../auth/access.js";
import { type RouteDef, route } from "./route-table.js";
import { setPaginationHeaders } from "./pagination.js";

type CronField = (typeof CRON_SELECT_FIELDS)[number];

/** Only the selected fields of a cron, in the selection's order (`now`: the server's time). */
function selectFields(cron: Cron, select: CronField[] | undefined): Record<string, unknown> {
  if (!select) return { ...cron };
  const now = new Date().toISOString();
  return Object.fromEntries(select.map((field) => [field, field === "now" ? now : cron[field]]));
}

export function cronRoutes(crons: CronService): RouteDef[] {
  const created = { 200: { description: "The cron", schema: CronSchema }, 404: { description: "Assistant or thread not found" } };

  return [
    route(
      {
        method: "POST",
        path: "/runs/crons",
        summary:
          "Create a stateless cron: each tick runs on a new thread (deleted after the run unless on_run_completed is keep)",
        body: CronCreateSchema,
        responses: created,
      },
      ({ body, request }) => crons.create(undefined, body, accessOf(request)),
    ),

    route(
      {
        method: "POST",
        path: "/threads/:thread_id/runs/crons",
        summary: "Create a cron whose runs go to the thread",
        params: ThreadIdParamsSchema,
        body: CronCreateSchema,
        responses: created,
      },
      ({ params, body, request }) => crons.create(params.thread_id, body, accessOf(request)),
    ),

    route(
      {
        method: "POST",
        path: "/runs/crons/search",
        summary: "Search crons",
        body: CronSearchSchema,
        bodyOptional: true,
        responses: { 200: { description: "Matching crons (X-Pagination-Total)", schema: z.array(CronSchema) } },
      },
      async ({ body, request, reply }) => {
        const { items, total } = await crons.search(body, accessOf(request));
        setPaginationHeaders(reply, body, items.length, total);
        return items.map((cron) => selectFields(cron, body.select));
      },
    ),

    route(
      {
        method: "POST",
        path: "/runs/crons/count",
        summary: "Count crons",
        body: CronCountSchema,
        bodyOptional: true,
        responses: { 200: { description: "The count", schema: z.int() } },
      },
      ({ body, request }) => crons.count(body, accessOf(request)),
    ),

    route(
      {
        method: "GET",
        path: "/runs/crons/:cron_id",
        summary: "Get a cron",
        params: CronIdParamsSchema,
        responses: { 200: { description: "The cron", schema: CronSchema }, 404: { description: "Not found" } },
      },
      ({ params, request }) => crons.get(params.cron_id, accessOf(request)),
    ),

    route(
      {
        method: "PATCH",
        path: "/runs/crons/:cron_id",
        summary: "Update a cron (a changed schedule, timezone, end_time or enabled reschedules it from now)",
        params: CronIdParamsSchema,
        body: CronPatchSchema,
        responses: { 200: { description: "The cron", schema: CronSchema }, 404: { description: "Not found" } },
      },
      ({ params, body, request }) => crons.update(params.cron_id, body, accessOf(request)),
    ),

    route(
      {
        method: "DELETE",
        path: "/runs/crons/:cron_id",
        summary: "Delete a cron (its runs stay)",
        params: CronIdParamsSchema,
        responses: { 204: { description: "Deleted" }, 404: { description: "Not found" } },
      },
      async ({ params, request, reply }) => {
        await crons.delete(params.cron_id, accessOf(request));
        return reply.status(204).send();
      },
    ),
  ];
}
