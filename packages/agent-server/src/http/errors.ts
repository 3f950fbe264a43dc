import type { FastifyError, FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { z } from "zod";
import { ConflictError, NotFoundError, UnprocessableError } from "../services/errors.js";

export interface ValidationDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** A 422 carrying the validation details of the request. */
export class RequestValidationError extends Error {
  constructor(readonly detail: ValidationDetail[]) {
    super("request validation failed");
  }
}

export function zodDetails(where: "path" | "query" | "body", error: z.ZodError): ValidationDetail[] {
  return error.issues.map((issue) => ({
    loc: [where, ...issue.path.map((part) => (typeof part === "number" ? part : String(part)))],
    msg: issue.message,
    type: issue.code,
  }));
}

/** Every error leaves as JSON; a client's mistake is never a 500. */
export function installErrorHandlers(app: FastifyInstance, logger: Logger): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof RequestValidationError) return reply.status(422).send({ detail: error.detail });
    if (error instanceof UnprocessableError) {
      return reply.status(422).send({ detail: [{ loc: error.loc, msg: error.message, type: "value_error" }] });
    }
    if (error instanceof NotFoundError) return reply.status(404).send({ detail: error.message });
    if (error instanceof ConflictError) return reply.status(409).send({ detail: error.message });
    if (error.code === "FST_ERR_CTP_INVALID_JSON_BODY" || error instanceof SyntaxError) {
      return reply
        .status(422)
        .send({ detail: [{ loc: ["body"], msg: `Invalid JSON: ${error.message}`, type: "json_invalid" }] });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.status(status).send({ detail: error.message });
    logger.error({ err: error, method: request.method, url: request.url }, "request failed");
    return reply.status(500).send({ detail: "Internal server error" });
  });
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send({ detail: `No route for ${request.method} ${request.url.split("?")[0]}` });
  });
}
