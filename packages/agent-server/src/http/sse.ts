import type { FastifyReply } from "fastify";
import type { OutgoingHttpHeaders } from "node:http";
import type { SseEvent } from "@berth/service-kit";
import type { StoredEvent } from "../storage/types.js";

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
  raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), "content-type": "application/json", ...options.headers });
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
