import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The first port the kernel hands out for a bind to port 0; Linux's default when it cannot be read. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 20_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const canBind = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });

/**
 * A TCP port nothing listens on, for a process that will bind it later. Taken below the kernel's ephemeral range: a port
 * from there cannot be handed meanwhile to someone else's bind to port 0 (a router, a test server), which only gets
 * ephemeral ports.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await canBind(port)) return port;
  }
}
