import type { FastifyInstance, FastifyReply } from "fastify";
import type { OutgoingHttpHeaders } from "node:http";
import { once } from "node:events";

/** One Server-Sent Event; `data` is one line (JSON). */
export interface SseFrame {
  id?: string | number;
  event?: string;
  data: string;
}

/** Proxies and browsers drop a connection idle for long: a comment is sent this often. */
const KEEP_ALIVE_MS = 15_000;

function frameText({ id, event, data }: SseFrame): string {
  return `${event === undefined ? "" : `event: ${event}\n`}${id === undefined ? "" : `id: ${id}\n`}data: ${data}\n\n`;
}

/**
 * Server-Sent Events responses. Each stream ends when its client goes away,
 * and every open one ends when the server closes (an open stream would
 * otherwise keep it from closing).
 */
export class EventStreams {
  private readonly open = new Set<AbortController>();

  constructor(app: FastifyInstance) {
    app.addHook("preClose", async () => {
      for (const stream of this.open) stream.abort();
    });
  }

  /** Aborts when the client of `reply` goes away or the server closes; take it before reading what to stream. */
  signal(reply: FastifyReply): AbortSignal {
    const stream = new AbortController();
    this.open.add(stream);
    reply.raw.once("close", () => {
      this.open.delete(stream);
      stream.abort();
    });
    return stream.signal;
  }

  /** Answers 200 with `frames` as they come, until they end or `signal` aborts. */
  async send(reply: FastifyReply, frames: AsyncIterable<SseFrame>, signal: AbortSignal): Promise<void> {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    raw.flushHeaders();
    const keepAlive = setInterval(() => {
      if (!raw.destroyed && !raw.writableEnded) raw.write(": keep-alive\n\n");
    }, KEEP_ALIVE_MS);
    try {
      for await (const frame of frames) {
        if (signal.aborted || raw.destroyed) break;
        // A slow client holds the stream back instead of the server buffering what it has not read.
        if (!raw.write(frameText(frame))) await once(raw, "drain", { signal }).catch(() => undefined);
      }
      raw.end();
    } catch {
      // Reading failed (the database went away): a clean end would say the stream is complete, so
      // the connection is cut and the client resumes from the last id it got.
      raw.destroy();
    } finally {
      clearInterval(keepAlive);
    }
  }
}
