import { type IncomingMessage, type OutgoingHttpHeaders, STATUS_CODES, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

/** An unread request body above this size is not drained after an error answer: the connection is closed instead. */
const DRAIN_LIMIT = 64 * 1024;
/** How long a refused upgrade's connection stays open for the client to close it first (a reset could lose the answer). */
const LINGER_MS = 2_000;

/** The router's own answers: JSON `{detail}` like the agent server's and the control plane's errors. */
export function replyJson(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const text = JSON.stringify(body);
  const extra: OutgoingHttpHeaders = { ...headers };
  // A page of another origin (the dashboard) reads the router's own answers (a refused key, say) rather than a
  // bare network error. They hold no deployment data, so any origin may; the deployment's own answers
  // keep the CORS policy of its agent server.
  if (request.headers.origin) extra["access-control-allow-origin"] = "*";
  // Node reads and discards what the client still sends; a large upload refused
  // (say, without a key) is cut short instead of being received for nothing.
  if (
    !request.readableEnded &&
    (Number(request.headers["content-length"] ?? 0) > DRAIN_LIMIT || request.headers["transfer-encoding"])
  ) {
    extra.connection = "close";
  }
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...extra });
  response.end(text);
}

/**
 * The router's own answer to an upgrade request it does not tunnel: written on
 * the raw socket (an upgrade has no ServerResponse), then the connection closes.
 */
export function refuseUpgrade(socket: Duplex, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const text = JSON.stringify(body);
  const all: OutgoingHttpHeaders = {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    connection: "close",
    ...headers,
  };
  endAndLinger(socket, `${statusLine(status)}${headerLines(all)}\r\n${text}`);
}

/** Ends a raw connection after `last`, reading on to see the client's FIN (what it still sends is discarded); one that never leaves is cut soon after. */
export function endAndLinger(socket: Duplex, last?: string): void {
  socket.resume();
  socket.end(last, () => {
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}

/** `HTTP/1.1 <status> <reason>` and its CRLF. */
export function statusLine(status: number, reason = STATUS_CODES[status] ?? ""): string {
  return `HTTP/1.1 ${status} ${reason}\r\n`;
}

/** Header lines as HTTP/1.1 writes them, one line per value of a repeated header (Set-Cookie). */
export function headerLines(headers: OutgoingHttpHeaders): string {
  let lines = "";
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) lines += `${name}: ${one}\r\n`;
  }
  return lines;
}

export const detail = (text: string) => ({ detail: text });
