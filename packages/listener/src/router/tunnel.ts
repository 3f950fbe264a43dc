import type { Logger } from "@berth/service-kit";
import http, { type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import type { Duplex } from "node:stream";
import { CONNECTION_ERRORS, targetOptions } from "./forward.js";
import { downstreamHeaders } from "./headers.js";
import type { OpenRequests } from "./open-requests.js";
import { detail, endAndLinger, headerLines, refuseUpgrade, statusLine } from "./replies.js";

export interface Tunnelling {
  /** The client's handshake request (a GET with Upgrade: websocket), already admitted. */
  request: IncomingMessage;
  /** The client's connection, handed over by the server's `upgrade` event. */
  socket: Duplex;
  /** What the client sent after its handshake (early frames): passed on once the upstream accepted. */
  head: Buffer;
  deploymentId: string;
  /** Path and query to ask the target for. */
  path: string;
  headers: OutgoingHttpHeaders;
  /** The deployment's target now (it may change while a handshake is under way). */
  currentTarget(): string | null;
  open: OpenRequests;
  /** Each open tunnel's cut, so the router's close can end them. */
  tunnels: Set<() => void>;
  logger?: Logger;
}

/** How long one side of a tunnel may stay open after the other closed, to flush its last bytes (a close frame). */
const CLOSE_GRACE_MS = 5_000;

/**
 * Passes a WebSocket handshake on to `target`; once the upstream switches
 * protocols, its 101 goes back to the client and the two connections are
 * spliced: bytes both ways with backpressure, one side's end passed on to the
 * other, both closed when either closes. The tunnel counts as an open request
 * of the target until then. An upstream that answers without switching (a 401,
 * a 404) has its answer relayed and the connection closed. A refused
 * connection is retried once on the deployment's current target when it
 * changed meanwhile (the revision was switched); otherwise 502.
 */
export function tunnel(tunnelling: Tunnelling, target: string): void {
  const client = tunnelling.socket;

  const attempt = (to: string, retried: boolean) => {
    const release = tunnelling.open.acquire(to);
    const { host, ...where } = targetOptions(to, tunnelling.path);
    const outgoing = http.request({
      ...where,
      method: "GET",
      headers: { ...tunnelling.headers, host, connection: "Upgrade", upgrade: tunnelling.request.headers.upgrade },
      // An upgraded connection belongs to its tunnel, never to a pool.
      agent: false,
    });
    outgoing.on("socket", (socket) => socket.setNoDelay(true));
    let answered = false;
    const clientLeft = () => {
      outgoing.destroy();
      release();
    };
    client.once("close", clientLeft);

    outgoing.once("upgrade", (answer: IncomingMessage, upstream: Duplex, upstreamHead: Buffer) => {
      answered = true;
      client.off("close", clientLeft);
      if (client.destroyed) {
        upstream.destroy();
        release();
        return;
      }
      const headers = {
        ...downstreamHeaders(answer.headers),
        connection: "Upgrade",
        upgrade: answer.headers.upgrade ?? "websocket",
      };
      client.write(`${statusLine(answer.statusCode ?? 101, answer.statusMessage)}${headerLines(headers)}\r\n`);
      if (upstreamHead.length > 0) client.write(upstreamHead);
      if (tunnelling.head.length > 0) upstream.write(tunnelling.head);
      splice(client, upstream, tunnelling.tunnels, release);
    });

    outgoing.once("response", (answer: IncomingMessage) => {
      answered = true;
      client.off("close", clientLeft);
      relayRefusal(answer, client, release);
    });

    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      if (answered) return;
      answered = true;
      client.off("close", clientLeft);
      release();
      if (client.destroyed) return;
      const now = tunnelling.currentTarget();
      if (!retried && CONNECTION_ERRORS.has(error.code ?? "") && now !== null && now !== to) {
        attempt(now, true);
        return;
      }
      tunnelling.logger?.warn({ deployment_id: tunnelling.deploymentId, target: to, err: error }, "upstream upgrade failed");
      refuseUpgrade(
        client,
        502,
        detail(`Deployment ${tunnelling.deploymentId} could not be reached: ${error.code ?? error.message}`),
      );
    });
    outgoing.end();
  };
  attempt(target, false);
}

/** The upstream's answer to a handshake it did not accept, relayed as it is; then the connection closes. */
function relayRefusal(answer: IncomingMessage, client: Duplex, release: () => void): void {
  answer.once("close", release);
  client.once("close", () => answer.destroy());
  if (client.destroyed) {
    answer.destroy();
    return;
  }
  const headers = { ...downstreamHeaders(answer.headers), connection: "close" };
  client.write(`${statusLine(answer.statusCode ?? 502, answer.statusMessage)}${headerLines(headers)}\r\n`);
  answer.pipe(client, { end: false });
  answer.once("end", () => endAndLinger(client));
  answer.once("close", () => {
    // The upstream went away mid-answer: the client must see a cut, not a complete answer.
    if (!answer.complete) client.destroy();
  });
}

/** Splices two connections into one tunnel, until both are closed. */
function splice(client: Duplex, upstream: Duplex, tunnels: Set<() => void>, release: () => void): void {
  let open = 2;
  let grace: NodeJS.Timeout | undefined;
  const cut = () => {
    client.destroy();
    upstream.destroy();
  };
  tunnels.add(cut);
  for (const [from, to] of [
    [client, upstream],
    [upstream, client],
  ] as const) {
    // pipe: backpressure both ways, and `from`'s end (a FIN) ends `to` after what it still has to write.
    from.pipe(to);
    from.on("error", cut);
    from.once("close", () => {
      open -= 1;
      if (open === 0) {
        clearTimeout(grace);
        tunnels.delete(cut);
        release();
        return;
      }
      // One side is gone: the other writes what it still holds, then closes too, or is cut.
      to.end();
      grace = setTimeout(cut, CLOSE_GRACE_MS).unref();
    });
  }
}
