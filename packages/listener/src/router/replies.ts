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

export const detail = (text: string) => ({ detail: text });
