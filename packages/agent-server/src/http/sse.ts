import type { FastifyReply } from "fastify";
import type { OutgoingHttpHeaders } from "node:http";
import type { StoredEvent } from "../storage/types.js";

/** One Server-Sent Event: `data` is one line of JSON. */
export interface SseEvent {
  id: string | number;
  event: string;
  data: string;
}

/** A run's logged events as SSE events (their id is the sequence number). */
export async function* runEvents(events: AsyncIterable<StoredEvent>): AsyncGenerator<SseEvent> {
  for await (const event of events) yield { id: event.seq, event: event.event, data: event.data };
}

/** Signals when the client goes away before the response finished. */
export function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function headersOf(reply: FastifyReply, extra: OutgoingHttpHeaders): OutgoingHttpHeaders {
  return { ...(reply.getHeaders() as OutgoingHttpHeaders), ...extra };
}

/**
 * Streams events as Server-Sent Events (`event`, one-line JSON `data`, `id`),
 * with a `: heartbeat` comment whenever the stream was idle for `heartbeatMs`.
 * The response ends as soon as the events end.
 */
export async function writeEventStream(
  reply: FastifyReply,
  events: AsyncIterable<SseEvent>,
  options: { heartbeatMs: number; headers: OutgoingHttpHeaders },
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(
    200,
    headersOf(reply, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      ...options.headers,
    }),
  );
  raw.flushHeaders();
  let lastWrite = Date.now();
  const heartbeat = setInterval(() => {
    if (Date.now() - lastWrite >= options.heartbeatMs && !raw.writableEnded) {
      raw.write(": heartbeat\n\n");
      lastWrite = Date.now();
    }
  }, options.heartbeatMs);
  let broken = false;
  try {
    for await (const event of events) {
      if (raw.destroyed) break;
      raw.write(`event: ${event.event}\ndata: ${event.data}\nid: ${event.id}\n\n`);
      lastWrite = Date.now();
    }
  } catch (error) {
    // Reading the events failed (the database went away): a clean end would tell the client the
    // stream is complete, so the connection is cut instead and the client resumes with Last-Event-ID.
    broken = true;
    raw.destroy();
    throw error;
  } finally {
    clearInterval(heartbeat);
    if (!broken) raw.end();
  }
}

const PENDING = Symbol("pending");

/**
 * Sends a JSON result that may take long: a quick one as a plain response; a
 * slow one keeps the connection alive through proxies with a newline every
 * `keepAliveMs` (JSON parsers skip leading whitespace) until the result comes.
 */
export async function sendJsonWhenReady(
  reply: FastifyReply,
  result: Promise<unknown>,
  options: { keepAliveMs: number; headers: OutgoingHttpHeaders },
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const early = await Promise.race([
    result,
    new Promise<typeof PENDING>((resolve) => (timer = setTimeout(() => resolve(PENDING), options.keepAliveMs))),
  ]);
  clearTimeout(timer);
  if (early !== PENDING) {
    reply.headers(options.headers).send(early);
    return;
  }
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, headersOf(reply, { "content-type": "application/json", ...options.headers }));
  const keepAlive = setInterval(() => raw.write("\n"), options.keepAliveMs);
  try {
    raw.write("\n");
    raw.end(JSON.stringify(await result));
  } catch (error) {
    raw.end(JSON.stringify({ __error__: { error: "Error", message: (error as Error).message } }));
  } finally {
    clearInterval(keepAlive);
  }
}
