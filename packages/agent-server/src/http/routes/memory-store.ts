import { defineRoute } from "@berth/service-kit";
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
import type { RouteContext } from "./context.js";

const tag = "store";

export function registerStoreRoutes({ app, catalog }: RouteContext, store: StoreService): void {
  defineRoute(
    app,
    catalog,
    {
      method: "PUT",
      path: "/store/items",
      summary: "Store or replace an item (embedded for semantic search when the store has an index)",
      tag,
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
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/store/items",
      summary: "Get an item (null when absent or expired, as the official servers answer)",
      tag,
      query: StoreGetQuerySchema,
      responses: { 200: { description: "The item, or null", schema: StoreItemSchema.nullable() } },
    },
    ({ query, request }) => store.get(query.namespace, query.key, query.refresh_ttl, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/store/items",
      summary: "Delete an item (absent: no error)",
      tag,
      body: StoreDeleteBodySchema,
      responses: { 204: { description: "Deleted" } },
    },
    async ({ body, request, reply }) => {
      await store.delete(body.namespace, body.key, accessOf(request));
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/store/items/search",
      summary: "Search items under a namespace prefix, by filter and (with an index) by meaning",
      tag,
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
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/store/namespaces",
      summary: "List the namespaces of stored items",
      tag,
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
  );
}
