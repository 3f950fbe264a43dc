import { defineRoute, type RouteInput, type RouteSpec } from "@berth/service-kit";
import type { z } from "zod";
import type { RouteContext } from "./context.js";

/** A route's declaration without its tag: each file's routes share one, given when they are registered. */
export type RouteDeclaration<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = Omit<RouteSpec<P, Q, B>, "tag">;

export type RouteHandler<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = (
  input: RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>>,
) => Promise<unknown>;

/** One route as data: what it declares, and how it registers itself (its handler typed by its schemas). */
export interface RouteDef {
  method: RouteSpec<z.ZodType, z.ZodType, z.ZodType>["method"];
  path: string;
  register(context: RouteContext, tag: string): void;
}

export function route<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  declaration: RouteDeclaration<P, Q, B>,
  handler: RouteHandler<P, Q, B>,
): RouteDef {
  return {
    method: declaration.method,
    path: declaration.path,
    register: ({ app, catalog }, tag) => defineRoute(app, catalog, { ...declaration, tag }, handler),
  };
}

/** Registers `routes` in order, each in the OpenAPI catalog under `tag`. */
export function registerRoutes(context: RouteContext, tag: string, routes: readonly RouteDef[]): void {
  for (const definition of routes) definition.register(context, tag);
}
