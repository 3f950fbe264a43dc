import type { StoreService } from "../../services/memory-store.js";
import {
  StoreDeleteBodySchema,
  StoreGetQuerySchema,
  StoreItemSchema,
  StoreNamespacesBodySchema,
  StoreNamespacesResponseSchema,
  StorePutBodySchema,
  StoreSearchBodySchema,
  StoreSearchResponseSchema,
} from "../schemas/memory-store.js";
import { accessOf } from "../auth/access.js";
import { type RouteDef, route } from "./route-table.js";

export function storeRoutes(store: StoreService): RouteDef[] {
  return [
    route(
      {
        method: "PUT",
        path: "/store/items",
        summary: "Store or replace an item (embedded for semantic search when the store has an index)",
        body: StorePutBodySchema,
        responses: { 204: { description: "Stored" } },
      },
      async ({ body, request, reply }) => {
        await store.put(
          { namespace: body.namespace, key: body.key, value: body.value, index: body.index, ttlMinutes: body.ttl },
          accessOf(request),
        );
        return reply.status(204).send();
      },
    ),

    route(
      {
        method: "GET",
        path: "/store/items",
        summary: "Get an item (null when absent or expired, as the official servers answer)",
        query: StoreGetQuerySchema,
        responses: { 200: { description: "The item, or null", schema: StoreItemSchema.nullable() } },
      },
      ({ query, request }) => store.get(query.namespace, query.key, query.refresh_ttl, accessOf(request)),
    ),

    route(
      {
        method: "DELETE",
        path: "/store/items",
        summary: "Delete an item (absent: no error)",
        body: StoreDeleteBodySchema,
        responses: { 204: { description: "Deleted" } },
      },
      async ({ body, request, reply }) => {
        await store.delete(body.namespace, body.key, accessOf(request));
        return reply.status(204).send();
      },
    ),

    route(
      {
        method: "POST",
        path: "/store/items/search",
        summary: "Search items under a namespace prefix, by filter and (with an index) by meaning",
        body: StoreSearchBodySchema,
        bodyOptional: true,
        responses: { 200: { description: "Matching items, best first", schema: StoreSearchResponseSchema } },
      },
      ({ body, request }) =>
        store.search(
          {
            namespacePrefix: body.namespace_prefix,
            filter: body.filter ?? undefined,
            limit: body.limit,
            offset: body.offset,
            query: body.query ?? undefined,
            refreshTtl: body.refresh_ttl,
          },
          accessOf(request),
        ),
    ),

    route(
      {
        method: "POST",
        path: "/store/namespaces",
        summary: "List the namespaces of stored items",
        body: StoreNamespacesBodySchema,
        bodyOptional: true,
        responses: { 200: { description: "Namespaces, sorted", schema: StoreNamespacesResponseSchema } },
      },
      ({ body, request }) =>
        store.listNamespaces(
          {
            prefix: body.prefix ?? undefined,
            suffix: body.suffix ?? undefined,
            maxDepth: body.max_depth ?? undefined,
            limit: body.limit,
            offset: body.offset,
          },
          accessOf(request),
        ),
    ),
  ];
}
