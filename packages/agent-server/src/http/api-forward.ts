import http, { type IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";

/** Headers of one connection, not of the request or response, and the length a forwarded body sets anew. */
export const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "content-length",
]);

/** A request body already read (a string or bytes), or still a stream. */
export type ForwardBody = string | Uint8Array | ReadableStream<Uint8Array> | null;

/** Statuses whose responses carry no body (a Response refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * The API's own listener on a private loopback port. Requests reach it over HTTP rather than in-process
 * (`inject` collects whole responses): its answers, run streams among them, come back chunk by chunk.
 */
export class ApiForwarder {
  private readonly agent = new http.Agent({ keepAlive: true });

  constructor(private readonly port: number) {}

  /** Sends `request` (with `body` in place of its own) to the API and answers with its response, streamed. */
  async forward(request: Request, body: ForwardBody, signal?: AbortSignal): Promise<Response> {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    for (const [name, value] of request.headers) {
      if (!HOP_BY_HOP.has(name)) headers[name] = value;
    }
    if (body !== null && !(typeof body === "string" || body instanceof Uint8Array)) body = await streamOrNothing(body);
    if (typeof body === "string" || body instanceof Uint8Array) headers["content-length"] = String(Buffer.byteLength(body));
    // Node frames a streamed body in chunks by default for POST, PUT and PATCH only: a DELETE's would go unframed.
    else if (body !== null) headers["transfer-encoding"] = "chunked";
    return new Promise<Response>((resolve, reject) => {
      const outgoing = http.request(
        {
          host: "127.0.0.1",
          port: this.port,
          method: request.method,
          path: `${url.pathname}${url.search}`,
          headers,
          agent: this.agent,
          signal,
        },
        (incoming) => resolve(toWebResponse(incoming, request.method)),
      );
      outgoing.on("error", reject);
      if (body === null) outgoing.end();
      else if (typeof body === "string" || body instanceof Uint8Array) outgoing.end(body);
      else
        Readable.fromWeb(body as NodeReadableStream<Uint8Array>)
          .on("error", (error) => outgoing.destroy(error))
          .pipe(outgoing);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * A streamed body, or null when it turns out empty (a bodyless DELETE still has a stream in a web Request): sent
 * chunked, an empty body would reach the API as one, which it may refuse where no body at all is fine.
 */
async function streamOrNothing(body: ReadableStream<Uint8Array>): Promise<ReadableStream<Uint8Array> | null> {
  const reader = body.getReader();
  let first = await reader.read();
  while (!first.done && first.value.byteLength === 0) first = await reader.read();
  if (first.done) return null;
  const head = first.value;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The API's answer as a web Response whose body streams as it arrives; cancelling it closes the connection. */
function toWebResponse(incoming: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const length = incoming.headers["content-length"];
  if (length !== undefined) headers.set("content-length", length);
  const status = incoming.statusCode ?? 502;
  const empty = method === "HEAD" || NO_BODY.has(status);
  if (empty) incoming.resume();
  const body = empty ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: incoming.statusMessage, headers });
}
