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

/**
 * An event as the bytes of its SSE frame. Many subscribers of one event can be
 * handed the same Buffer: it is encoded once, not once per connection.
 */
export function encodeSseEvent(event: SseEvent): Buffer {
  return Buffer.from(eventText(event));
}

const HEARTBEAT = Buffer.from(": heartbeat\n\n");

/** An open stream as its heartbeat sees it. */
interface Beating {
  raw: ServerResponse;
  lastWrite: number;
}

/** How often the shared interval looks for idle streams, in heartbeat periods: a beat comes at most this late. */
const HEARTBEAT_CHECK = 0.2;

/**
 * One interval per heartbeat period for every open stream of the process
 * (ten thousand streams are one timer, not ten thousand); it stops when the
 * last stream of that period ends.
 */
const heartbeats = new Map<number, { streams: Set<Beating>; timer: NodeJS.Timeout }>();

function beat(heartbeatMs: number, stream: Beating): () => void {
  let group = heartbeats.get(heartbeatMs);
  if (!group) {
    const streams = new Set<Beating>();
    const timer = setInterval(() => {
      const now = Date.now();
      for (const open of streams) {
        if (now - open.lastWrite >= heartbeatMs && !open.raw.writableEnded && !open.raw.destroyed) {
          open.raw.write(HEARTBEAT);
          open.lastWrite = now;
        }
      }
    }, heartbeatMs * HEARTBEAT_CHECK);
    // The interval never holds the process open by itself.
    timer.unref();
    group = { streams, timer };
    heartbeats.set(heartbeatMs, group);
  }
  const { streams, timer } = group;
  streams.add(stream);
  return () => {
    streams.delete(stream);
    if (streams.size === 0) {
      clearInterval(timer);
      heartbeats.delete(heartbeatMs);
    }
  };
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

/** What `writeEventStream` sends of an item: an event, its frame already encoded by `encodeSseEvent`, or nothing. */
export type SseFrame = SseEvent | Buffer | undefined;

/**
 * Events that can also be handed straight to the stream as they come, while
 * it waits for the next one (no promise per event per connection): the sink
 * writes the item and returns false once the client is behind or gone, and
 * the source then hands on the rest through iteration.
 */
export interface PushingEvents<T> extends AsyncIterable<T> {
  deliverTo(sink: (item: T) => boolean): void;
}

function isPushing<T>(events: AsyncIterable<T>): events is PushingEvents<T> {
  return typeof (events as Partial<PushingEvents<T>>).deliverTo === "function";
}

/**
 * Answers 200 with `events` as Server-Sent Events as they come (each item
 * through `encode`, by default the item itself: an event, or its frame
 * already encoded by `encodeSseEvent`; undefined skips it), with a
 * `: heartbeat` comment whenever the stream was idle for about `heartbeatMs`
 * (a fifth more at most); the response ends when the events end. A slow client
 * holds the events back rather than the server buffering what it has not read.
 */
export async function writeEventStream<T = SseFrame>(
  reply: FastifyReply,
  events: AsyncIterable<T>,
  options: { heartbeatMs: number; headers?: OutgoingHttpHeaders; encode?: (item: T) => SseFrame },
): Promise<void> {
  const encode = options.encode ?? ((item: T) => item as SseFrame);
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
  const stream: Beating = { raw, lastWrite: Date.now() };
  const stopBeating = beat(options.heartbeatMs, stream);
  let broken = false;
  /** Writes an item; false when the socket holds more than it should until it drains. */
  const write = (item: T): boolean => {
    const event = encode(item);
    if (event === undefined) return true;
    stream.lastWrite = Date.now();
    return raw.write(Buffer.isBuffer(event) ? event : eventText(event));
  };
  if (isPushing(events)) events.deliverTo((item) => !raw.destroyed && write(item));
  try {
    for await (const item of events) {
      if (raw.destroyed) break;
      // Items handed straight over may have filled the socket.
      if (raw.writableNeedDrain) await drained(raw);
      if (!write(item)) await drained(raw);
    }
  } catch (error) {
    // Reading the events failed (the database went away): a clean end would tell the client the
    // stream is complete, so the connection is cut instead and the client resumes with Last-Event-ID.
    broken = true;
    raw.destroy();
    throw error;
  } finally {
    stopBeating();
    if (!broken) raw.end();
  }
}
