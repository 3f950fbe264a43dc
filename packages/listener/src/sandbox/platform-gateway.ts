import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";

/** The control plane's services a deployment's server uses: the tracing API and the Auth Service. */
const ALLOWED_PATHS = ["/api/v1/", "/v2/auth/"];

/** Hop-by-hop headers, which belong to one connection and are not passed on. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"]);

/**
 * The one address on the host a sandboxed server may reach: a port of the
 * listener on the host's loopback, forwarded into each server's network
 * namespace at the same port of its own loopback. It passes the tracing API
 * and the Auth Service of the control plane on, and refuses everything else
 * (the rest of the control plane's API, the router, other deployments).
 */
export class PlatformGateway {
  private readonly server: http.Server;
  private listening: Promise<number> | undefined;

  constructor(private readonly upstream: URL) {
    this.server = http.createServer((request, response) => this.pass(request, response));
  }

  /** The gateway's port on 127.0.0.1 (it starts listening on the first call). */
  port(): Promise<number> {
    this.listening ??= new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => resolve((this.server.address() as AddressInfo).port));
    });
    return this.listening;
  }

  close(): Promise<void> {
    if (!this.listening) return Promise.resolve();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private pass(request: http.IncomingMessage, response: http.ServerResponse): void {
    const path = request.url ?? "/";
    const pathname = path.split("?")[0] ?? "/";
    if (!ALLOWED_PATHS.some((prefix) => pathname.startsWith(prefix)) || climbs(pathname)) {
      response.writeHead(403, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          detail: "A deployment reaches only the platform's tracing API (/api/v1/) and Auth Service (/v2/auth/) here",
        }),
      );
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    }
    headers.host = this.upstream.host;
    const client = this.upstream.protocol === "https:" ? https : http;
    const base = this.upstream.pathname.replace(/\/+$/, "");
    const outgoing = client.request(
      {
        protocol: this.upstream.protocol,
        hostname: this.upstream.hostname.replace(/^\[(.*)\]$/, "$1"),
        port: this.upstream.port,
        method: request.method,
        path: `${base}${path}`,
        headers,
      },
      (answer) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
        }
        response.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(response);
      },
    );
    outgoing.on("error", (error) => {
      if (response.headersSent) {
        response.destroy(error);
        return;
      }
      response.writeHead(502, { "content-type": "application/json" });
      response.end(JSON.stringify({ detail: `The control plane could not be reached: ${error.message}` }));
    });
    response.once("close", () => {
      if (!response.writableFinished) outgoing.destroy();
    });
    request.pipe(outgoing);
  }
}

/** Whether a path has a `.` or `..` segment, also percent-encoded: it could leave the allowed prefix upstream. */
function climbs(pathname: string): boolean {
  return pathname.split("/").some((segment) => {
    try {
      const decoded = decodeURIComponent(segment);
      return decoded === "." || decoded === "..";
    } catch {
      return true;
    }
  });
}
