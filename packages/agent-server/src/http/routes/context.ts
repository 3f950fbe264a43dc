import type { FastifyInstance } from "fastify";
import type { RouteCatalog } from "../route.js";

export interface RouteContext {
  app: FastifyInstance;
  catalog: RouteCatalog;
}
