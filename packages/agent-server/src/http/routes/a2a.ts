import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { z } from "zod";
import { type SseEvent, writeEventStream } from "@berth/service-kit";
import { type A2aCaller, A2aService } from "../../services/a2a/a2a-service.js";
import { A2aError, A2aErrorCode } from "../../services/a2a/protocol.js";
import type { Services } from "../../services/index.js";
import { a2aUrl } from "../a2a/card-url.js";
import {
  accepts,
  errorResponse,
  isFault,
  type JsonRpcError,
  type JsonRpcId,
  JsonRpcRequestSchema,
  parseEnvelope,
  resultResponse,
} from "../a2a/json-rpc.js";
import { isStreamingMethod, methodCall } from "../a2a/methods.js";
import { accessOf } from "../auth/access.js";
import type { HeaderSelector } from "../header-patterns.js";
import { withRequestHeaders } from "../request-headers.js";
import { disconnectSignal } from "../sse.js";
import type { ServerInfo } from "./meta.js";
import { type RouteDef, route } from "./route-table.js";

export interface A2aRouteOptions {
  info: ServerInfo;
  mountPrefix?: string;
  /** LANGGRAPH_API_URL: the base of the card's `url` when set. */
  apiUrl?: string;
  /** A `message/stream` idle this long gets a heartbeat comment. */
  heartbeatMs?: number;
  /** Which request headers reach the run's `configurable` (`http.configurable_headers`), as for `/runs`. */
  forwardHeaders?: HeaderSelector;
  /** Where a failure that is no client's doing is logged (answered -32603). */
  logger?: Logger;
}

const AssistantParamsSchema = z.object({ assistant_id: z.string().min(1) });
const CardQuerySchema = z.object({ assistant_id: z.string().optional() });
const CARD_PATHS = [
  "/a2a/:assistant_id",
  "/a2a/:assistant_id/.well-known/agent-card.json",
  "/a2a/:assistant_id/.well-known/agent.json",
];
const DEFAULT_HEARTBEAT_MS = 15_000;

/** `/a2a/{assistant_id}` and the agent cards: each assistant as an A2A agent whose contexts are threads. */
export function a2aRoutes(services: Services, options: A2aRouteOptions): RouteDef[] {
  const a2a = new A2aService(services.assistants, services.threads, services.graphState, services.runs);
  const card = (request: FastifyRequest, reply: FastifyReply, assistantId: string | undefined) =>
    serveCard(a2a, options, request, reply, assistantId);
  return [
    route(
      {
        method: "GET",
        path: "/.well-known/agent-card.json",
        summary: "The A2A agent card of an assistant (?assistant_id=)",
        query: CardQuerySchema,
        responses: cardResponses,
      },
      ({ query, request, reply }) => card(request, reply, query.assistant_id),
    ),
    ...CARD_PATHS.map((path) =>
      route(
        {
          method: "GET",
          path,
          summary: "The A2A agent card of the assistant",
          params: AssistantParamsSchema,
          responses: cardResponses,
        },
        ({ params, request, reply }) => card(request, reply, params.assistant_id),
      ),
    ),
    jsonRpcRoute(a2a, options),
    {
      method: "DELETE",
      path: "/a2a/:assistant_id",
      register: ({ app }) => {
        app.route({
          method: ["DELETE", "PUT", "PATCH"],
          url: "/a2a/:assistant_id",
          handler: (_request, reply) => reply.status(405).header("allow", "GET, POST").send({ detail: "Method Not Allowed" }),
        });
      },
    },
  ];
}

const cardResponses = {
  200: { description: "The agent card: one skill, JSON-RPC at `url`, streaming" },
  400: { description: "No assistant_id, or no such assistant: `{error: {code: -32602, message}}`" },
};

async function serveCard(
  a2a: A2aService,
  options: A2aRouteOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  assistantId: string | undefined,
): Promise<unknown> {
  if (!assistantId) {
    return reply.status(400).send({ error: { code: A2aErrorCode.invalidParams, message: "assistant_id is required" } });
  }
  try {
    return await a2a.card(assistantId, accessOf(request), a2aUrl(request, assistantId, options), options.info.version);
  } catch (error) {
    if (!(error instanceof A2aError)) throw error;
    return reply.status(400).send({ error: { code: error.code, message: error.message } });
  }
}

/** `POST /a2a/{assistant_id}`, with its own body parser: the text as sent, so bad JSON is a JSON-RPC error. */
function jsonRpcRoute(a2a: A2aService, options: A2aRouteOptions): RouteDef {
  const path = "/a2a/:assistant_id";
  return {
    method: "POST",
    path,
    register: ({ app, catalog }, tag) => {
      catalog.push({
        method: "POST",
        path,
        tag,
        summary: "A2A JSON-RPC: message/send, message/stream (SSE), tasks/get, tasks/cancel; contextId is the thread",
        params: AssistantParamsSchema,
        body: JsonRpcRequestSchema,
        responses: {
          200: { description: "The JSON-RPC response (errors included), or for message/stream its events as SSE" },
          202: { description: "A notification: accepted, not answered" },
          400: { description: "Not JSON, not JSON-RPC 2.0, or an Accept header refusing the answer's type" },
        },
      });
      app.register(async (scope: FastifyInstance) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
        scope.post(path, (request, reply) => answer(a2a, options, request, reply));
      });
    },
  };
}

async function answer(a2a: A2aService, options: A2aRouteOptions, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const envelope = parseEnvelope(typeof request.body === "string" ? request.body : "");
  if (isFault(envelope)) return void (await reply.status(envelope.status).send(envelope.body));
  // A notification is acknowledged and not acted on: nobody would learn what became of it.
  if (envelope.id === undefined) return void (await reply.status(202).send());
  const id = envelope.id;
  const streaming = isStreamingMethod(envelope.method);
  const wanted = streaming ? "text/event-stream" : "application/json";
  if (!accepts(request.headers.accept, wanted)) {
    const message = `Not Acceptable: ${envelope.method} answers ${wanted}, which the Accept header refuses`;
    return void (await reply.status(400).send(errorResponse(id, { code: A2aErrorCode.invalidRequest, message })));
  }
  const { assistant_id: assistantId } = AssistantParamsSchema.parse(request.params);
  const access = accessOf(request);
  const caller: A2aCaller = {
    access,
    withRequest: (body) =>
      options.forwardHeaders ? withRequestHeaders(body, request.headers, request.user, options.forwardHeaders) : body,
  };
  const call = methodCall(envelope.method, envelope.params, {
    service: a2a,
    assistantId,
    caller,
    card: () => a2a.card(assistantId, access, a2aUrl(request, assistantId, options), options.info.version),
  });
  if (!call) {
    const error = { code: A2aErrorCode.methodNotFound, message: `Method not found: ${envelope.method}` };
    return void (await reply.send(errorResponse(id, error)));
  }
  if (call.kind === "stream") {
    const signal = disconnectSignal(reply);
    const events = streamEvents(
      id,
      () => call.run(signal),
      (error) => rpcError(error, request, options.logger),
    );
    await writeEventStream(reply, events, { heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS });
    return;
  }
  // Invalid params throw as the call starts: caught as its answer too.
  const body = await Promise.resolve()
    .then(() => call.run())
    .then(
      (result) => resultResponse(id, result),
      (error: unknown) => errorResponse(id, rpcError(error, request, options.logger)),
    );
  await reply.send(body);
}

/** Each result as one SSE event holding a whole JSON-RPC response; a failure is the last event. */
async function* streamEvents(
  id: JsonRpcId,
  results: () => AsyncGenerator<unknown>,
  toError: (error: unknown) => JsonRpcError,
): AsyncGenerator<SseEvent> {
  try {
    for await (const result of results()) yield { data: JSON.stringify(resultResponse(id, result)) };
  } catch (error) {
    yield { data: JSON.stringify(errorResponse(id, toError(error))) };
  }
}

/** A2A errors as they are; anything else is logged and answered as an internal error. */
function rpcError(error: unknown, request: FastifyRequest, logger: Logger | undefined): JsonRpcError {
  if (error instanceof A2aError) {
    return { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) };
  }
  logger?.error({ err: error, method: request.method, url: request.url }, "A2A request failed");
  return { code: A2aErrorCode.internalError, message: "Internal error" };
}
