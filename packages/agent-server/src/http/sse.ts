import type { FastifyReply } from "fastify";
import type { OutgoingHttpHeaders } from "node:http";
import { encodeSseEvent } from "@berth/service-kit";
import type { StoredEvent } from "../storage/types.js";

/**
 * Frames by event: a broker hands every follower of a run in this process the
 * same event object, so its frame is encoded once for all their streams.
 */
const frames = new WeakMap<StoredEvent, Buffer>();

/** A run's event as its SSE frame (its id is the sequence number). */
export function runEventFrame(event: StoredEvent): Buffer {
  let frame = frames.get(event);
  if (!frame) {
    frame = encodeSseEvent({ id: event.seq, event: event.event, data: event.data });
    frames.set(event, frame);
  }
  return frame;
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
