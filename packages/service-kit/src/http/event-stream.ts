import type { FastifyReply } from "fastify";
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";

/** One Server-Sent Event: `data` is one line (JSON). */
export interface SseEvent {
  id?: string | number;
  event?: string;
  data: string;
}

function eventText({ id, event, data }: SseEvent): string {
  return `${event === undefined ? "" : `event: ${event}\n`}data: ${data}\n${id === undefined ? "" : `id: ${id}\n`}\n`;
}

/** Resolves once the socket took what it buffered, or closed. */
function drained(raw: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      raw.off("drain", done);
      raw.off("close", done);
      resolve();
    };
    raw.once("drain", done);
    raw.once("close", done);
  });
}

/**
 * Answers 200 with `events` as Server-Sent Events as they come, with a
 * `: heartbeat` comment whenever the stream was idle for `heartbeatMs`; the
 * response ends when the events end. A slow client holds the events back
 * rather than the server buffering what it has not read.
 */
export async function writeEventStream(
  reply: FastifyReply,
  events: AsyncIterable<SseEvent>,
  options: { heartbeatMs: number; headers?: OutgoingHttpHeaders },
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    ...options.headers,
  });
  raw.flushHeaders();
  let lastWrite = Date.now();
  const heartbeat = setInterval(() => {
    if (Date.now() - lastWrite >= options.heartbeatMs && !raw.writableEnded && !raw.destroyed) {
      raw.write(": heartbeat\n\n");
      lastWrite = Date.now();
    }
  }, options.heartbeatMs);
  let broken = false;
  try {
    for await (const event of events) {
      if (raw.destroyed) break;
      lastWrite = Date.now();
      if (!raw.write(eventText(event))) await drained(raw);
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
