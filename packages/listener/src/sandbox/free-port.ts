import { createServer, type AddressInfo } from "node:net";

/** A port of 127.0.0.1 free at the time of asking (the caller must cope with losing it to another process). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
