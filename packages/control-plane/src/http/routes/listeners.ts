import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { ListenerService } from "../../services/listeners.js";
import { Detail, NOT_FOUND_RESPONSE, PageQuery } from "../schemas/common.js";
import { Listener, ListenerCreateRequest, ListenerIdParams, ListenerPage, ListenerPatchRequest } from "../schemas/listeners.js";
import type { RouteContext } from "./context.js";

export function registerListenerRoutes({ app, catalog, caller }: RouteContext, listeners: ListenerService): void {
  const tag = "Listeners (v2)";
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/listeners",
      summary: "List listeners",
      tag,
      query: z.object(PageQuery),
      responses: { 200: { description: "A page", schema: ListenerPage } },
    },
    async ({ query, request }) => listeners.list((await caller(request)).tenantId, query.limit, query.offset),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners",
      summary: "Register a listener and the compute it deploys to",
      tag,
      body: ListenerCreateRequest,
      responses: {
        201: { description: "The listener", schema: Listener },
        409: { description: "compute_id taken", schema: Detail },
      },
    },
    async ({ body, request, reply }) => reply.status(201).send(await listeners.create((await caller(request)).tenantId, body)),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/listeners/:listener_id",
      summary: "Get a listener",
      tag,
      params: ListenerIdParams,
      responses: { 200: { description: "The listener", schema: Listener }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, request }) => listeners.get((await caller(request)).tenantId, params.listener_id),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "PATCH",
      path: "/v2/listeners/:listener_id",
      summary: "Update a listener's compute_config or version",
      tag,
      params: ListenerIdParams,
      body: ListenerPatchRequest,
      responses: { 200: { description: "The listener", schema: Listener }, ...NOT_FOUND_RESPONSE },
    },
    async ({ params, body, request }) => listeners.patch((await caller(request)).tenantId, params.listener_id, body),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/v2/listeners/:listener_id",
      summary: "Delete a listener no live deployment uses",
      tag,
      params: ListenerIdParams,
      responses: { 204: { description: "Deleted" }, ...NOT_FOUND_RESPONSE, 409: { description: "In use", schema: Detail } },
    },
    async ({ params, request, reply }) => {
      await listeners.delete((await caller(request)).tenantId, params.listener_id);
      return reply.status(204).send();
    },
  );
}
