import type { FastifyError, FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { z } from "zod";
import {
  BadGatewayError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  HttpStatusError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnprocessableError,
} from "../errors.js";
import { outageOf } from "../outages.js";

export interface ValidationDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** A 422 (or the route's own status) carrying the validation details of the request. */
export class RequestValidationError extends Error {
  constructor(
    readonly detail: ValidationDetail[],
    readonly status: 400 | 422 = 422,
  ) {
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

const DOMAIN_STATUS: [new (...args: never[]) => Error, number][] = [
  [BadRequestError, 400],
  [UnauthorizedError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [PayloadTooLargeError, 413],
  [BadGatewayError, 502],
];

/** Every error leaves as JSON; a client's mistake is never a 500. */
export function installErrorHandlers(app: FastifyInstance, logger: Logger): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof RequestValidationError) {
      const routeStatus = (request.routeOptions.config as { invalidStatus?: number } | undefined)?.invalidStatus;
      return reply.status(routeStatus ?? error.status).send({ detail: error.detail });
    }
    if (error instanceof UnprocessableError) {
      return reply.status(422).send({ detail: [{ loc: error.loc, msg: error.message, type: "value_error" }] });
    }
    if (error instanceof HttpStatusError)
      return reply.status(error.status).headers(error.headers).send({ detail: error.message });
    const status = DOMAIN_STATUS.find(([type]) => error instanceof type)?.[1];
    if (status) return reply.status(status).send({ detail: error.message });
    if (error.code === "FST_ERR_CTP_INVALID_JSON_BODY" || error instanceof SyntaxError) {
      return reply.status(422).send({ detail: [{ loc: ["body"], msg: `Invalid JSON: ${error.message}`, type: "json_invalid" }] });
    }
    const httpStatus = error.statusCode ?? 500;
    if (httpStatus >= 400 && httpStatus < 500) return reply.status(httpStatus).send({ detail: error.message });
    // The disk or the database failing is not a bug: say what it is, and when to come back.
    const outage = outageOf(error);
    if (outage) {
      logger.warn(
        { err: error, method: request.method, url: request.url, status: outage.status },
        "request failed: storage unavailable",
      );
      if (outage.retryAfter !== undefined) reply.header("retry-after", String(outage.retryAfter));
      return reply.status(outage.status).send({ detail: outage.detail });
    }
    logger.error({ err: error, method: request.method, url: request.url }, "request failed");
    return reply.status(500).send({ detail: "Internal server error" });
  });
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send({ detail: `No route for ${request.method} ${request.url.split("?")[0]}` });
  });
}
