import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { freePort } from "@berth/test-support";

/**
 * A private redis-server (no persistence) on a port of its own, so a test can
 * kill and restart it without disturbing the Redis other tests share.
 */
export class PrivateRedis {
  private process: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.up();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again) on its port; resolves once it accepts connections. */
  async up(): Promise<void> {
    const child = spawn(
      "redis-server",
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let output = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
    });
    child.stdout!.resume();
    this.process = child;
  }

  /** kill -9: every connection drops, and what the server held (buffers, subscriptions) is gone. */
  async down(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await once(child, "exit");
  }

  /** Kills the server, waits `outageMs`, starts it again. */
  async restart(outageMs = 0): Promise<void> {
    await this.down();
    if (outageMs > 0) await new Promise((resolve) => setTimeout(resolve, outageMs));
    await this.up();
  }
}
