import { z } from "zod";
import type { ThreadService } from "../../services/threads.js";
import {
  ThreadSchema,
  ThreadCountSchema,
  ThreadCreateSchema,
  ThreadIdParamsSchema,
  ThreadPatchSchema,
  ThreadPruneSchema,
  ThreadPruneResponseSchema,
  ThreadSearchSchema,
} from "../schemas/threads.js";
import { accessOf } from "../auth/access.js";
import { type RouteDef, route } from "./route-table.js";
import { setPaginationHeaders } from "./pagination.js";

export function threadRoutes(threads: ThreadService): RouteDef[] {
  return [
    route(
      {
        method: "POST",
        path: "/threads",
        summary: "Create a thread (optionally seeded with supersteps)",
        body: ThreadCreateSchema,
        bodyOptional: true,
        responses: { 200: { description: "The thread", schema: ThreadSchema }, 409: { description: "Exists" } },
      },
      ({ body, request }) => threads.create(body, accessOf(request)),
    ),

    route(
      {
        method: "POST",
        path: "/threads/search",
        summary: "Search threads",
        body: ThreadSearchSchema,
        bodyOptional: true,
        responses: { 200: { description: "Matching threads (X-Pagination-Total)", schema: z.array(ThreadSchema) } },
      },
      async ({ body, request, reply }) => {
        const { items, total } = await threads.search(body, accessOf(request));
        setPaginationHeaders(reply, body, items.length, total);
        return items;
      },
    ),

    route(
      {
        method: "POST",
        path: "/threads/count",
        summary: "Count threads",
        body: ThreadCountSchema,
        bodyOptional: true,
        responses: { 200: { description: "The count", schema: z.int() } },
      },
      ({ body, request }) => threads.count(body, accessOf(request)),
    ),

    route(
      {
        method: "POST",
        path: "/threads/prune",
        summary: "Delete threads, or keep only each one's latest checkpoint",
        body: ThreadPruneSchema,
        responses: { 200: { description: "How many of the ids were threads", schema: ThreadPruneResponseSchema } },
      },
      async ({ body, request }) => ({
        pruned_count: await threads.prune(body.thread_ids, body.strategy, accessOf(request)),
      }),
    ),

    route(
      {
        method: "GET",
        path: "/threads/:thread_id",
        summary: "Get a thread",
        params: ThreadIdParamsSchema,
        responses: { 200: { description: "The thread", schema: ThreadSchema }, 404: { description: "Not found" } },
      },
      ({ params, request }) => threads.get(params.thread_id, accessOf(request)),
    ),

    route(
      {
        method: "PATCH",
        path: "/threads/:thread_id",
        summary: "Update a thread's metadata (merged)",
        params: ThreadIdParamsSchema,
        body: ThreadPatchSchema,
        responses: { 200: { description: "The thread", schema: ThreadSchema }, 404: { description: "Not found" } },
      },
      ({ params, body, request }) => threads.patch(params.thread_id, body.metadata, body.ttl, accessOf(request)),
    ),

    route(
      {
        method: "DELETE",
        path: "/threads/:thread_id",
        summary: "Delete a thread with its checkpoints",
        params: ThreadIdParamsSchema,
        responses: { 204: { description: "Deleted" }, 404: { description: "Not found" } },
      },
      async ({ params, request, reply }) => {
        await threads.delete(params.thread_id, accessOf(request));
        return reply.status(204).send();
      },
    ),

    route(
      {
        method: "POST",
        path: "/threads/:thread_id/copy",
        summary: "Copy a thread with its whole history",
        params: ThreadIdParamsSchema,
        responses: { 200: { description: "The new thread", schema: ThreadSchema }, 404: { description: "Not found" } },
      },
      ({ params, request }) => threads.copy(params.thread_id, accessOf(request)),
    ),
  ];
}
