import { z } from "zod";
import type { GraphStateService } from "../../services/graph-state.js";
import { defineRoute } from "@berth/service-kit";
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
import type { RouteContext } from "./context.js";

const tag = "state";

export function registerStateRoutes({ app, catalog }: RouteContext, state: GraphStateService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/threads/:thread_id/state",
      summary: "The thread's current state",
      tag,
      params: ThreadIdParamsSchema,
      query: StateQuerySchema,
      responses: { 200: { description: "Thread state", schema: ThreadStateSchema }, 404: { description: "Not found" } },
    },
    ({ params, query, request }) => state.get(params.thread_id, undefined, query.subgraphs, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/threads/:thread_id/state/:checkpoint_id",
      summary: "The thread's state at a checkpoint",
      tag,
      params: StateAtCheckpointParamsSchema,
      query: StateQuerySchema,
      responses: { 200: { description: "Thread state", schema: ThreadStateSchema }, 404: { description: "Not found" } },
    },
    ({ params, query, request }) =>
      state.get(params.thread_id, { checkpoint_id: params.checkpoint_id }, query.subgraphs, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/threads/:thread_id/state/checkpoint",
      summary: "The thread's state at a checkpoint (any namespace)",
      tag,
      params: ThreadIdParamsSchema,
      body: StateCheckpointBodySchema,
      responses: { 200: { description: "Thread state", schema: ThreadStateSchema }, 404: { description: "Not found" } },
    },
    ({ params, body, request }) => state.get(params.thread_id, body.checkpoint, body.subgraphs, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/threads/:thread_id/state",
      summary: "Update the thread's state (as a node, optionally from a checkpoint: a fork)",
      tag,
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
  );

  defineRoute(
    app,
    catalog,
    {
      method: "PATCH",
      path: "/threads/:thread_id/state",
      summary: "Merge metadata into the latest (or the named) checkpoint's metadata",
      tag,
      params: ThreadIdParamsSchema,
      body: StatePatchSchema,
      responses: { 204: { description: "Patched" }, 404: { description: "Not found" } },
    },
    async ({ params, body, request, reply }) => {
      const selector = body.checkpoint ?? (body.checkpoint_id ? { checkpoint_id: body.checkpoint_id } : undefined);
      await state.patchMetadata(params.thread_id, body.metadata, selector, accessOf(request));
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/threads/:thread_id/history",
      summary: "The thread's past states, newest first",
      tag,
      params: ThreadIdParamsSchema,
      body: HistoryBodySchema,
      bodyOptional: true,
      responses: { 200: { description: "Thread states", schema: z.array(ThreadStateSchema) } },
    },
    ({ params, body, request }) => {
      const before = typeof body.before === "object" && "configurable" in body.before ? body.before.configurable : body.before;
      return state.history(params.thread_id, { ...body, before }, accessOf(request));
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/threads/:thread_id/history",
      summary: "The thread's past states, newest first",
      tag,
      params: ThreadIdParamsSchema,
      query: HistoryQuerySchema,
      responses: { 200: { description: "Thread states", schema: z.array(ThreadStateSchema) } },
    },
    ({ params, query, request }) =>
      state.history(params.thread_id, { limit: query.limit ?? 10, before: query.before }, accessOf(request)),
  );
}
