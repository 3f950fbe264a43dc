import { encodeSseEvent, writeEventStream } from "@berth/service-kit";
import type { WebSocket } from "ws";
import { protocolMethod, matchesFilter } from "../../services/protocol-events.js";
import type { FastifyRequest } from "fastify";
import type { RunDecorator, ThreadProtocolService } from "../../services/thread-protocol.js";
import type { HeaderSelector } from "../header-patterns.js";
import { withRequestHeaders } from "../request-headers.js";
import type { StoredEvent } from "../../storage/types.js";
import { accessOf } from "../auth/access.js";
import { ProtocolSocketSession } from "../protocol-socket.js";
import { EventStreamBodySchema, ProtocolCommandSchema, ProtocolErrorSchema, ProtocolSuccessSchema } from "../schemas/protocol.js";
import { ThreadIdParamsSchema } from "../schemas/threads.js";
import { disconnectSignal } from "../sse.js";
import { type RouteDef, route } from "./route-table.js";

export interface ProtocolRouteDeps {
  protocol: ThreadProtocolService;
  heartbeatMs: number;
  /** Which request headers reach the graph's `configurable` (`http.configurable_headers`). */
  forwardHeaders: HeaderSelector;
}

const EVENTS_PATH = "/threads/:thread_id/stream/events";

/**
 * Protocol v2 on a thread: commands over HTTP, and the thread's events as
 * SSE (one subscription per connection) or over a WebSocket (commands and
 * subscriptions in band).
 */
export function protocolRoutes({ protocol, heartbeatMs, forwardHeaders }: ProtocolRouteDeps): RouteDef[] {
  /** As for the classic run routes: the request's user and forwarded headers reach the run's config. */
  const decorator =
    (request: FastifyRequest): RunDecorator =>
    (input) =>
      withRequestHeaders(input, request.headers, request.user, forwardHeaders);
  return [
    route(
      {
        method: "POST",
        path: "/threads/:thread_id/commands",
        summary: "Send a protocol v2 command (run.start, input.respond, state.get, agent.getTree, ...)",
        params: ThreadIdParamsSchema,
        body: ProtocolCommandSchema,
        invalidStatus: 400,
        responses: {
          200: {
            description: "The command's result, or a protocol error",
            schema: ProtocolSuccessSchema.or(ProtocolErrorSchema),
          },
        },
      },
      ({ params, body, request }) => protocol.command(params.thread_id, body, accessOf(request), decorator(request)),
    ),
    route(
      {
        method: "POST",
        path: EVENTS_PATH,
        summary: "Follow the thread's protocol v2 events (SSE; `since` replays the events after that seq)",
        params: ThreadIdParamsSchema,
        body: EventStreamBodySchema,
        invalidStatus: 400,
        responses: { 200: { description: "text/event-stream of protocol events" } },
      },
      async ({ params, body, request, reply }) => {
        const events = await protocol.events(params.thread_id, body.since ?? 0, accessOf(request), disconnectSignal(reply));
        await writeEventStream(reply, events, {
          heartbeatMs,
          encode: (event) => (matchesFilter(event, body) ? protocolFrame(event) : undefined),
        });
      },
    ),
    {
      method: "GET",
      path: EVENTS_PATH,
      register: ({ app }) => {
        app.get(EVENTS_PATH, { websocket: true }, (socket: WebSocket, request) => {
          const parsed = ThreadIdParamsSchema.safeParse(request.params);
          if (!parsed.success) {
            socket.close(1008, "thread_id must be a UUID");
            return;
          }
          new ProtocolSocketSession(
            socket,
            request.socket,
            parsed.data.thread_id,
            protocol,
            accessOf(request),
            decorator(request),
          );
        });
      },
    },
  ];
}

/** Frames by event: the followers of a thread in this process share each event object, so it is encoded once. */
const frames = new WeakMap<StoredEvent, Buffer>();

/** A protocol event as its SSE frame: `id` the seq, `event` the method, `data` the whole event. */
function protocolFrame(event: StoredEvent): Buffer {
  let frame = frames.get(event);
  if (!frame) {
    frame = encodeSseEvent({ id: event.seq, event: protocolMethod(event), data: event.data });
    frames.set(event, frame);
  }
  return frame;
}
