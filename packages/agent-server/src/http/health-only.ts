import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * What a worker process serves when it is given a port: `GET /ok` and nothing
 * else, so a supervisor (a container listener, a cluster's probes) can tell it
 * is up the same way it tells an API process is.
 */
export async function serveHealthOnly(host: string, port: number): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    const ok = request.method === "GET" && request.url?.split("?")[0] === "/ok";
    response.writeHead(ok ? 200 : 404, { "content-type": "application/json" });
    response.end(JSON.stringify(ok ? { ok: true } : { detail: "A worker serves GET /ok only" }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.address.includes(":") ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
