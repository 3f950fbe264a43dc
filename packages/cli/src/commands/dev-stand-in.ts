import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A server answering every request with 503 and why; closed to give the port back. */
export interface StandIn {
  /** The port it listens on (the one asked for, or the one a `--port 0` got). */
  port: number;
  close(): Promise<void>;
}

/**
 * While `berth dev`'s project does not load, its port answers every request `503 {"detail": reason}` (the load
 * error, or why the server exited) instead of refusing connections: a client, Studio or a browser sees why. Resolves
 * undefined when the port cannot be had (something else took it), which the caller reports.
 */
export function serveUnavailable(host: string, port: number, reason: string): Promise<StandIn | undefined> {
  const body = JSON.stringify({ detail: reason });
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(503, { "content-type": "application/json", "retry-after": "1", connection: "close" });
    response.end(body);
  });
  return new Promise((resolve) => {
    server.once("error", () => resolve(undefined));
    server.listen({ host, port }, () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((closed) => {
            server.close(() => closed());
            server.closeAllConnections();
          }),
      }),
    );
  });
}
