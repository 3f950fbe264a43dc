import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

/** An unread request body above this size is not drained after an error answer: the connection is closed instead. */
const DRAIN_LIMIT = 64 * 1024;

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

export const detail = (text: string) => ({ detail: text });
