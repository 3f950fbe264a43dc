import type { FastifyInstance } from "fastify";
import type { RouteCatalog } from "@berth/service-kit";

export interface RouteContext {
  app: FastifyInstance;
  catalog: RouteCatalog;
}
