import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "@berth/service-kit";

export interface RegistryProcessOptions {
  /** Its configuration and storage. */
  dir: string;
  port: number;
  /** The control plane's token endpoint, and the service and issuer its tokens name. */
  realm: string;
  service: string;
  issuer: string;
  /** The certificate of the key that signs the tokens. */
  certificateFile: string;
  /** The registry binary (Debian's docker-registry by default). */
  command?: string;
  logger: Logger;
}

const READY_TIMEOUT_MS = 10_000;

/**
 * Runs the platform's image registry (the CNCF distribution registry, Debian's
 * `docker-registry`) on 127.0.0.1 with token authentication against the control
 * plane: every push and pull needs a token the control plane issued. Resolves
 * once it answers; rejects with its output when it does not start.
 */
/** Where the registry keeps images, under its folder. */
export function registryStorageOf(dir: string): string {
  return join(dir, "data");
}

export async function startRegistryProcess(options: RegistryProcessOptions): Promise<{ close(): Promise<void> }> {
  await mkdir(registryStorageOf(options.dir), { recursive: true, mode: 0o700 });
  const config = join(options.dir, "config.yml");
  await writeFile(
    config,
    [
      "version: 0.1",
      "log: {level: warn}",
      `storage: {filesystem: {rootdirectory: ${JSON.stringify(registryStorageOf(options.dir))}}, delete: {enabled: true}}`,
      `http: {addr: "127.0.0.1:${options.port}"}`,
      "auth:",
      "  token:",
      `    realm: ${JSON.stringify(options.realm)}`,
      `    service: ${JSON.stringify(options.service)}`,
      `    issuer: ${JSON.stringify(options.issuer)}`,
      `    rootcertbundle: ${JSON.stringify(options.certificateFile)}`,
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(options.command ?? "docker-registry", ["serve", config], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = once(child, "exit");
  let closing = false;
  void exited.then(([code]) => {
    if (!closing) options.logger.error({ code, output }, "the image registry exited");
  });
  child.on("error", (error) => options.logger.error({ err: error }, "the image registry could not be started"));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
      throw new Error(`The image registry did not start: ${output.trim() || "no output"}`);
    const status = await fetch(`http://127.0.0.1:${options.port}/v2/`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 401) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`The image registry did not answer on 127.0.0.1:${options.port} within 10 s: ${output.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  options.logger.info({ address: `127.0.0.1:${options.port}` }, "image registry listening");
  return {
    async close() {
      closing = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}
