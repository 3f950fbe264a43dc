import type { FastifyInstance, FastifyReply } from "fastify";

/**
 * The abort signals of open Server-Sent Event streams: each aborts when its
 * client goes away, and every open one when the server closes (an open
 * stream would otherwise keep it from closing).
 */
export class OpenStreams {
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
}
