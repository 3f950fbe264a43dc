import type { Logger } from "@berth/service-kit";
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import { downstreamHeaders } from "./headers.js";
import type { OpenRequests } from "./open-requests.js";
import { detail, replyJson } from "./replies.js";
import { RequestBody } from "./request-body.js";

export interface Forwarding {
  request: IncomingMessage;
  response: ServerResponse;
  deploymentId: string;
  /** Path and query to ask the target for. */
  path: string;
  headers: OutgoingHttpHeaders;
  /** The deployment's target now (it may change while a request is under way). */
  currentTarget(): string | null;
  open: OpenRequests;
  agent: http.Agent;
  logger?: Logger;
}

/** Failures where the upstream never produced a response: the request may go elsewhere. */
export const CONNECTION_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ECONNABORTED",
  "ENOTCONN",
  "EHOSTUNREACH",
  "ETIMEDOUT",
]);

/**
 * Forwards one request to `target` and streams the answer back. Before any
 * response, a connection failure is retried once on the deployment's current
 * target when it changed meanwhile (the revision was switched), or when a
 * pooled keep-alive connection turned out to be closed; otherwise 502.
 */
export function forward(forwarding: Forwarding, target: string): void {
  const { request: client, response: reply } = forwarding;
  const body = new RequestBody(client);
  let clientGone = false;
  let upstream: http.ClientRequest | undefined;
  reply.once("close", () => {
    if (reply.writableFinished) return;
    // The client left: the upstream request (a run's stream, say) is aborted with it.
    clientGone = true;
    upstream?.destroy();
  });

  const attempt = (to: string, retried: boolean) => {
    const release = forwarding.open.acquire(to);
    const { host, ...where } = targetOptions(to, forwarding.path);
    const outgoing = http.request({
      ...where,
      method: client.method,
      headers: { ...forwarding.headers, host },
      agent: forwarding.agent,
    });
    upstream = outgoing;
    // `close` follows the end of the response (or the failure): until then the target is busy with it.
    outgoing.once("close", release);
    outgoing.on("socket", (socket) => socket.setNoDelay(true));
    let settled = false;
    outgoing.on("response", (answer) => {
      settled = true;
      body.forgetReplay();
      relay(answer, reply);
    });
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      if (clientGone) return;
      if (settled) {
        // After the response started, the client sees the cut; a failure after it ended changes nothing.
        if (!reply.writableFinished) reply.destroy(error);
        return;
      }
      settled = true;
      const now = forwarding.currentTarget();
      const refused = CONNECTION_ERRORS.has(error.code ?? "");
      const staleSocket = outgoing.reusedSocket && error.code === "ECONNRESET";
      if (!retried && refused && now !== null && (now !== to || staleSocket) && body.canReplay()) {
        attempt(now, true);
        return;
      }
      body.detach();
      forwarding.logger?.warn({ deployment_id: forwarding.deploymentId, target: to, err: error }, "upstream request failed");
      replyJson(
        client,
        reply,
        502,
        detail(`Deployment ${forwarding.deploymentId} could not be reached: ${error.code ?? error.message}`),
      );
    });
    body.sendTo(outgoing);
  };
  attempt(target, false);
}

/** Where a request to `target` goes: its address, `path` under the target's own path, and the Host to send. */
export function targetOptions(
  target: string,
  path: string,
): { protocol: string; hostname: string; port: string; path: string; host: string } {
  const url = new URL(target);
  return {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"), // an IPv6 literal without its URL brackets
    port: url.port,
    path: `${url.pathname.replace(/\/+$/, "")}${path}`,
    host: url.host,
  };
}

/** Streams the upstream answer: headers at once for streams (SSE), then every chunk as it comes. */
function relay(answer: IncomingMessage, reply: ServerResponse): void {
  const status = answer.statusCode ?? 502;
  if (answer.statusMessage) reply.writeHead(status, answer.statusMessage, downstreamHeaders(answer.headers));
  else reply.writeHead(status, downstreamHeaders(answer.headers));
  if (answer.headers["content-length"] === undefined) reply.flushHeaders();
  answer.on("data", (chunk: Buffer) => {
    if (!reply.write(chunk)) answer.pause();
  });
  reply.on("drain", () => answer.resume());
  answer.on("end", () => reply.end());
  answer.on("close", () => {
    // The upstream went away mid-answer: the client must see a broken stream, not a complete one.
    if (!answer.complete) reply.destroy();
  });
}
