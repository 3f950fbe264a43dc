import { z } from "zod";
import type { AssistantService } from "../../services/assistants.js";
import { accessOf } from "../auth/access.js";
import { type RouteDef, route } from "./route-table.js";
import {
  AssistantSchema,
  AssistantCountSchema,
  AssistantCreateSchema,
  AssistantDeleteQuerySchema,
  AssistantGraphQuerySchema,
  AssistantIdParamsSchema,
  AssistantPatchSchema,
  AssistantSearchSchema,
  AssistantSetLatestSchema,
  AssistantVersionSchema,
  AssistantVersionsQuerySchema,
  SubgraphsParamsSchema,
  SubgraphsQuerySchema,
} from "../schemas/assistants.js";
import { setPaginationHeaders } from "./pagination.js";

export function assistantRoutes(assistants: AssistantService): RouteDef[] {
  return [
    route(
      {
        method: "POST",
        path: "/assistants",
        summary: "Create an assistant",
        body: AssistantCreateSchema,
        responses: { 200: { description: "The assistant", schema: AssistantSchema }, 409: { description: "Exists" } },
      },
      ({ body, request }) => assistants.create(body, accessOf(request)),
    ),

    route(
      {
        method: "POST",
        path: "/assistants/search",
        summary: "Search assistants",
        body: AssistantSearchSchema,
        bodyOptional: true,
        responses: { 200: { description: "Matching assistants (X-Pagination-Total)", schema: z.array(AssistantSchema) } },
      },
      async ({ body, request, reply }) => {
        const { items, total } = await assistants.search(body, accessOf(request));
        setPaginationHeaders(reply, body, items.length, total);
        return items;
      },
    ),

    route(
      {
        method: "POST",
        path: "/assistants/count",
        summary: "Count assistants",
        body: AssistantCountSchema,
        bodyOptional: true,
        responses: { 200: { description: "The count", schema: z.int() } },
      },
      ({ body, request }) => assistants.count(body, accessOf(request)),
    ),

    route(
      {
        method: "GET",
        path: "/assistants/:assistant_id",
        summary: "Get an assistant (by id or graph id)",
        params: AssistantIdParamsSchema,
        responses: { 200: { description: "The assistant", schema: AssistantSchema }, 404: { description: "Not found" } },
      },
      ({ params, request }) => assistants.get(params.assistant_id, accessOf(request)),
    ),

    route(
      {
        method: "PATCH",
        path: "/assistants/:assistant_id",
        summary: "Update an assistant (metadata is merged; creates a new version)",
        params: AssistantIdParamsSchema,
        body: AssistantPatchSchema,
        bodyOptional: true,
        responses: { 200: { description: "The assistant", schema: AssistantSchema }, 404: { description: "Not found" } },
      },
      ({ params, body, request }) => assistants.patch(params.assistant_id, body, accessOf(request)),
    ),

    route(
      {
        method: "DELETE",
        path: "/assistants/:assistant_id",
        summary: "Delete an assistant",
        params: AssistantIdParamsSchema,
        query: AssistantDeleteQuerySchema,
        responses: { 204: { description: "Deleted" }, 404: { description: "Not found" } },
      },
      async ({ params, query, request, reply }) => {
        await assistants.delete(params.assistant_id, query.delete_threads, accessOf(request));
        return reply.status(204).send();
      },
    ),

    route(
      {
        method: "POST",
        path: "/assistants/:assistant_id/versions",
        summary: "List an assistant's versions, newest first",
        params: AssistantIdParamsSchema,
        body: AssistantVersionsQuerySchema,
        bodyOptional: true,
        responses: { 200: { description: "Versions", schema: z.array(AssistantVersionSchema) } },
      },
      ({ params, body, request }) => assistants.versions(params.assistant_id, body, accessOf(request)),
    ),

    route(
      {
        method: "POST",
        path: "/assistants/:assistant_id/latest",
        summary: "Make a version the current one",
        params: AssistantIdParamsSchema,
        body: AssistantSetLatestSchema,
        responses: { 200: { description: "The assistant", schema: AssistantSchema }, 404: { description: "Not found" } },
      },
      ({ params, body, request }) => assistants.setLatest(params.assistant_id, body.version, accessOf(request)),
    ),

    route(
      {
        method: "GET",
        path: "/assistants/:assistant_id/graph",
        summary: "The assistant's graph as nodes and edges",
        params: AssistantIdParamsSchema,
        query: AssistantGraphQuerySchema,
        responses: { 200: { description: "Nodes and edges" } },
      },
      ({ params, query, request }) => assistants.drawing(params.assistant_id, query.xray, accessOf(request)),
    ),

    route(
      {
        method: "GET",
        path: "/assistants/:assistant_id/schemas",
        summary: "JSON schemas of the assistant's graph",
        params: AssistantIdParamsSchema,
        responses: { 200: { description: "input, output, state, config and context schemas" } },
      },
      ({ params, request }) => assistants.schemas(params.assistant_id, accessOf(request)),
    ),

    ...["/assistants/:assistant_id/subgraphs", "/assistants/:assistant_id/subgraphs/:namespace"].map((path) =>
      route(
        {
          method: "GET",
          path,
          summary: "Schemas of the graph's subgraphs, keyed by namespace",
          params: SubgraphsParamsSchema,
          query: SubgraphsQuerySchema,
          responses: { 200: { description: "Subgraph schemas" } },
        },
        ({ params, query, request }) =>
          assistants.subgraphs(params.assistant_id, params.namespace, query.recurse, accessOf(request)),
      ),
    ),
  ];
}
