import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { networkInterfaces } from "node:os";

/**
 * An "outside" host for egress tests: a network namespace of the test's own
 * on this machine, joined to the host by a veth pair, serving HTTP. Nothing
 * outside this machine may be contacted from here, so this stands in for
 * the internet. Needs root and iproute2.
 */
export interface OutsideHost {
  /** The host's address on the pair (the machine's side). */
  hostAddress: string;
  /** The outside host's address. */
  address: string;
  /** Its HTTP server, which answers every request with `outside ok`. */
  url: string;
  close(): Promise<void>;
}

export async function startOutsideHost(): Promise<OutsideHost> {
  const tag = randomInt(0x10000, 0xfffff).toString(16);
  const name = `berth-test-outside-${tag}`;
  const hostSide = `bto${tag}`;
  // A /30 of TEST-NET-2 (documentation addresses, not a private range, so sandboxes treat it as the internet), one
  // that no other outside host of this machine (another test file's) uses.
  const taken = new Set(
    Object.values(networkInterfaces())
      .flat()
      .map((entry) => entry?.address ?? "")
      .filter((address) => address.startsWith("198.51.100."))
      .map((address) => Math.floor(Number(address.split(".")[3]) / 4) * 4),
  );
  const free = Array.from({ length: 64 }, (_, n) => n * 4).filter((base) => !taken.has(base));
  const base = free[randomInt(0, free.length)]!;
  const hostAddress = `198.51.100.${base + 1}`;
  const address = `198.51.100.${base + 2}`;
  const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
  ip("netns", "add", name);
  let server: ChildProcess | undefined;
  try {
    ip("link", "add", hostSide, "type", "veth", "peer", "name", "outside0", "netns", name);
    ip("addr", "add", `${hostAddress}/30`, "dev", hostSide);
    ip("link", "set", hostSide, "up");
    ip("-n", name, "addr", "add", `${address}/30`, "dev", "outside0");
    ip("-n", name, "link", "set", "outside0", "up");
    ip("-n", name, "link", "set", "lo", "up");
    const port = 8081;
    const script = `require("node:http").createServer((q, s) => s.end("outside ok")).listen(${port}, "0.0.0.0", () => console.log("ready"))`;
    server = spawn("ip", ["netns", "exec", name, process.execPath, "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      server!.stdout!.once("data", () => resolve());
      server!.once("exit", (code) => reject(new Error(`the outside host's server exited (${code})`)));
    });
    const started = server;
    return {
      hostAddress,
      address,
      url: `http://${address}:${port}/`,
      close: async () => {
        started.kill("SIGKILL");
        // Deleting the namespace also deletes its end of the pair, and so the host's.
        ip("netns", "delete", name);
      },
    };
  } catch (error) {
    server?.kill("SIGKILL");
    ip("netns", "delete", name);
    throw error;
  }
}
