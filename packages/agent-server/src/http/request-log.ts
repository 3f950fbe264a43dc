import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { HeaderPatterns } from "../config/http-config.js";
import { headerSelector, selectHeaders } from "./header-patterns.js";

const none = () => false;

/**
 * `http.logging_headers`: one line per answered request, with the request headers the patterns select
 * (correlation and trace ids, typically). Health checks and metrics reads (the listener's, every few seconds) are left
 * out: probes would drown the rest.
 */
export function installRequestLog(app: FastifyInstance, logger: Logger, patterns: HeaderPatterns): void {
  const select = headerSelector(patterns, none);
  app.addHook("onResponse", async (request, reply) => {
    const path = request.url.split("?", 1)[0];
    if (path === "/ok" || path === "/metrics") return;
    logger.info(
      {
        method: request.method,
        url: request.originalUrl,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        headers: selectHeaders(request.headers, select),
      },
      "request",
    );
  });
}
