import { defineRoute } from "@berth/service-kit";
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
import type { RouteContext } from "./context.js";
import { setPaginationHeaders } from "./pagination.js";

const tag = "crons";

type CronField = (typeof CRON_SELECT_FIELDS)[number];

/** Only the selected fields of a cron, in the selection's order (`now`: the server's time). */
function selectFields(cron: Cron, select: CronField[] | undefined): Record<string, unknown> {
  if (!select) return { ...cron };
  const now = new Date().toISOString();
  return Object.fromEntries(select.map((field) => [field, field === "now" ? now : cron[field]]));
}

export function registerCronRoutes({ app, catalog }: RouteContext, crons: CronService): void {
  const created = { 200: { description: "The cron", schema: CronSchema }, 404: { description: "Assistant or thread not found" } };

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/runs/crons",
      summary: "Create a stateless cron: each tick runs on a new thread (deleted after the run unless on_run_completed is keep)",
      tag,
      body: CronCreateSchema,
      responses: created,
    },
    ({ body, request }) => crons.create(undefined, body, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/threads/:thread_id/runs/crons",
      summary: "Create a cron whose runs go to the thread",
      tag,
      params: ThreadIdParamsSchema,
      body: CronCreateSchema,
      responses: created,
    },
    ({ params, body, request }) => crons.create(params.thread_id, body, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/runs/crons/search",
      summary: "Search crons",
      tag,
      body: CronSearchSchema,
      bodyOptional: true,
      responses: { 200: { description: "Matching crons (X-Pagination-Total)", schema: z.array(CronSchema) } },
    },
    async ({ body, request, reply }) => {
      const { items, total } = await crons.search(body, accessOf(request));
      setPaginationHeaders(reply, body, items.length, total);
      return items.map((cron) => selectFields(cron, body.select));
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/runs/crons/count",
      summary: "Count crons",
      tag,
      body: CronCountSchema,
      bodyOptional: true,
      responses: { 200: { description: "The count", schema: z.int() } },
    },
    ({ body, request }) => crons.count(body, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/runs/crons/:cron_id",
      summary: "Get a cron",
      tag,
      params: CronIdParamsSchema,
      responses: { 200: { description: "The cron", schema: CronSchema }, 404: { description: "Not found" } },
    },
    ({ params, request }) => crons.get(params.cron_id, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "PATCH",
      path: "/runs/crons/:cron_id",
      summary: "Update a cron (a changed schedule, timezone, end_time or enabled reschedules it from now)",
      tag,
      params: CronIdParamsSchema,
      body: CronPatchSchema,
      responses: { 200: { description: "The cron", schema: CronSchema }, 404: { description: "Not found" } },
    },
    ({ params, body, request }) => crons.update(params.cron_id, body, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/runs/crons/:cron_id",
      summary: "Delete a cron (its runs stay)",
      tag,
      params: CronIdParamsSchema,
      responses: { 204: { description: "Deleted" }, 404: { description: "Not found" } },
    },
    async ({ params, request, reply }) => {
      await crons.delete(params.cron_id, accessOf(request));
      return reply.status(204).send();
    },
  );
}
