import { z } from "zod";
import type { GraphStateService } from "../../services/graph-state.js";
import {
  HistoryBodySchema,
  HistoryQuerySchema,
  StateAtCheckpointParamsSchema,
  StateCheckpointBodySchema,
  StatePatchSchema,
  StateQuerySchema,
  StateUpdateSchema,
  StateUpdateResponseSchema,
  ThreadIdParamsSchema,
  ThreadStateSchema,
} from "../schemas/threads.js";
import { accessOf } from "../auth/access.js";
import { type RouteDef, route } from "./route-table.js";

export function stateRoutes(state: GraphStateService): RouteDef[] {
  return [
    route(
      {
        method: "GET",
        path: "/threads/:thread_id/state",
        summary: "The thread's current state",
        params: ThreadIdParamsSchema,
        query: StateQuerySchema,
        responses: { 200: { description: "Thread state", schema: ThreadStateSchema }, 404: { description: "Not found" } },
      },
      ({ params, query, request }) => state.get(params.thread_id, undefined, query.subgraphs, accessOf(request)),
    ),

    route(
      {
        method: "GET",
        path: "/threads/:thread_id/state/:checkpoint_id",
        summary: "The thread's state at a checkpoint",
        params: StateAtCheckpointParamsSchema,
        query: StateQuerySchema,
        responses: { 200: { description: "Thread state", schema: ThreadStateSchema }, 404: { description: "Not found" } },
      },
      ({ params, query, request }) =>
        state.get(params.thread_id, { checkpoint_id: params.checkpoint_id }, query.subgraphs, accessOf(request)),
    ),

    route(
      {
        method: "POST",
        path: "/threads/:thread_id/state/checkpoint",
        summary: "The thread's state at a checkpoint (any namespace)",
        params: ThreadIdParamsSchema,
        body: StateCheckpointBodySchema,
        responses: { 200: { description: "Thread state", schema: ThreadStateSchema }, 404: { description: "Not found" } },
      },
      ({ params, body, request }) => state.get(params.thread_id, body.checkpoint, body.subgraphs, accessOf(request)),
    ),

    route(
      {
        method: "POST",
        path: "/threads/:thread_id/state",
        summary: "Update the thread's state (as a node, optionally from a checkpoint: a fork)",
        params: ThreadIdParamsSchema,
        body: StateUpdateSchema,
        bodyOptional: true,
        responses: {
          200: { description: "The new checkpoint", schema: StateUpdateResponseSchema },
          404: { description: "Not found" },
          409: { description: "The thread is busy" },
        },
      },
      ({ params, body, request }) => state.update(params.thread_id, body, accessOf(request)),
    ),

    route(
      {
        method: "PATCH",
        path: "/threads/:thread_id/state",
        summary: "Merge metadata into the latest (or the named) checkpoint's metadata",
        params: ThreadIdParamsSchema,
        body: StatePatchSchema,
        responses: { 204: { description: "Patched" }, 404: { description: "Not found" } },
      },
      async ({ params, body, request, reply }) => {
        const selector = body.checkpoint ?? (body.checkpoint_id ? { checkpoint_id: body.checkpoint_id } : undefined);
        await state.patchMetadata(params.thread_id, body.metadata, selector, accessOf(request));
        return reply.status(204).send();
      },
    ),

    route(
      {
        method: "POST",
        path: "/threads/:thread_id/history",
        summary: "The thread's past states, newest first",
        params: ThreadIdParamsSchema,
        body: HistoryBodySchema,
        bodyOptional: true,
        responses: { 200: { description: "Thread states", schema: z.array(ThreadStateSchema) } },
      },
      ({ params, body, request }) => {
        const before = typeof body.before === "object" && "configurable" in body.before ? body.before.configurable : body.before;
        return state.history(params.thread_id, { ...body, before }, accessOf(request));
      },
    ),

    route(
      {
        method: "GET",
        path: "/threads/:thread_id/history",
        summary: "The thread's past states, newest first",
        params: ThreadIdParamsSchema,
        query: HistoryQuerySchema,
        responses: { 200: { description: "Thread states", schema: z.array(ThreadStateSchema) } },
      },
      ({ params, query, request }) =>
        state.history(params.thread_id, { limit: query.limit ?? 10, before: query.before }, accessOf(request)),
    ),
  ];
}
