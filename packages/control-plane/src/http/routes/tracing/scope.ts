import type { FastifyRequest } from "fastify";
import type { TracingScope } from "../../../tracing/scope.js";

/** Authenticates a tracing request and says what it may reach (docs/tracing.md, "Deployments' keys"). */
export type ScopeOfRequest = (request: FastifyRequest) => Promise<TracingScope>;
