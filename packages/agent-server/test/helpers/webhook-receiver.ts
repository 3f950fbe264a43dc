import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Delivery {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as received, for signature checks. */
  raw: string;
  body: Record<string, unknown>;
}

/**
 * A local webhook receiver: records every request, answers with the status
 * `respond` picks (from the n-th request to the same path), and lets tests
 * await the n-th request to a path. It can stop and listen again on its port.
 */
export class Receiver {
  readonly deliveries: Delivery[] = [];
  private waiters: { path: string; count: number; resolve: (deliveries: Delivery[]) => void }[] = [];
  private server?: Server;
  url = "";
  port = 0;

  constructor(private readonly respond: (delivery: Delivery, nth: number) => number = () => 200) {}

  async start(port = this.port): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString();
        const delivery: Delivery = {
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          raw,
          body: JSON.parse(raw || "null"),
        };
        this.deliveries.push(delivery);
        const nth = this.to(delivery.path).length;
        res.writeHead(this.respond(delivery, nth), { "content-type": "text/plain" }).end("ok");
        this.notify();
      });
    });
    this.server.listen(port, "127.0.0.1");
    await once(this.server, "listening");
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
  }

  stop(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    this.server = undefined;
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  to(path: string): Delivery[] {
    return this.deliveries.filter((delivery) => delivery.path === path);
  }

  /** Resolves once `count` requests reached `path`. */
  waitFor(path: string, count = 1): Promise<Delivery[]> {
    return new Promise((resolve) => {
      this.waiters.push({ path, count, resolve });
      this.notify();
    });
  }

  private notify(): void {
    this.waiters = this.waiters.filter((waiter) => {
      const received = this.to(waiter.path);
      if (received.length < waiter.count) return true;
      waiter.resolve(received);
      return false;
    });
  }
}
