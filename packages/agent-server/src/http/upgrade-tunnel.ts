import type { IncomingMessage } from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";

/**
 * Tunnels upgrade requests (protocol v2's WebSocket) from the public listener
 * to the API's private port, byte for byte: the API's own hooks check the
 * server key and authenticate the upgrade, as for any request. The project's
 * app does not see them (a fetch app cannot answer an upgrade).
 */
export class UpgradeTunnels {
  private readonly open = new Set<Duplex>();

  constructor(private readonly apiPort: number) {}

  tunnel(request: IncomingMessage, client: Duplex, head: Buffer): void {
    const api = net.connect(this.apiPort, "127.0.0.1");
    this.open.add(client);
    const cut = () => {
      client.destroy();
      api.destroy();
      this.open.delete(client);
    };
    client.on("error", cut);
    client.on("close", cut);
    api.on("error", () => {
      if (!client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
      cut();
    });
    api.on("close", cut);
    api.once("connect", () => {
      api.write(requestHead(request));
      if (head.length > 0) api.write(head);
      client.pipe(api);
      api.pipe(client);
    });
  }

  /** Cuts every open tunnel (the server is closing). */
  closeAll(): void {
    for (const client of this.open) client.destroy();
    this.open.clear();
  }
}

/** The request line and headers as the client sent them. */
function requestHead(request: IncomingMessage): string {
  const lines = [`${request.method} ${request.url} HTTP/${request.httpVersion}`];
  for (let i = 0; i < request.rawHeaders.length; i += 2) lines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}
