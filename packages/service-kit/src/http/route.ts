import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { RequestValidationError, zodDetails } from "./errors.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: HttpMethod;
  /** Fastify path syntax: `/threads/:thread_id`. */
  path: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /** An absent body counts as `{}` (the SDK sends none for some POSTs). */
  bodyOptional?: boolean;
  /** The status of a request its schemas refuse: 422 unless the protocol it serves says otherwise. */
  invalidStatus?: 400 | 422;
  /** Response descriptions by status, with the schema of the success body. */
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** Routes as declared, for the OpenAPI document. */
export type RouteCatalog = RouteSpec<z.ZodType, z.ZodType, z.ZodType>[];

function parse<T extends z.ZodType>(
  schema: T | undefined,
  value: unknown,
  where: "path" | "query" | "body",
  status: 400 | 422 = 422,
): z.infer<T> {
  if (!schema) return undefined as z.infer<T>;
  const result = schema.safeParse(value);
  if (!result.success) throw new RequestValidationError(zodDetails(where, result.error), status);
  return result.data;
}

/**
 * Registers a route whose zod schemas validate the request and describe it in
 * the OpenAPI document. The handler's return value is sent as JSON unless the
 * handler already sent a reply.
 */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  app: FastifyInstance,
  catalog: RouteCatalog,
  spec: RouteSpec<P, Q, B>,
  handler: (input: RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>>) => Promise<unknown>,
): void {
  catalog.push(spec as unknown as RouteSpec<z.ZodType, z.ZodType, z.ZodType>);
  app.route({
    method: spec.method,
    url: spec.path,
    // Also for a body that is not JSON at all, refused before the handler runs.
    config: { invalidStatus: spec.invalidStatus },
    handler: async (request, reply) => {
      const input = {
        params: parse(spec.params, request.params, "path", spec.invalidStatus),
        query: parse(spec.query, request.query, "query", spec.invalidStatus),
        body: parse(spec.body, request.body === undefined && spec.bodyOptional ? {} : request.body, "body", spec.invalidStatus),
        request,
        reply,
      };
      const result = await handler(input);
      if (reply.sent) return reply;
      return reply.send(result);
    },
  });
}
