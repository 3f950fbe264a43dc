import { Client } from "@langchain/langgraph-sdk";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { backendEnv } from "./backend.js";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(here, "..", "..", "..", "..");
export const FIXTURES = join(here, "..", "fixtures");
const BERTH_BIN = join(REPO_ROOT, "packages", "cli", "bin", "berth.mjs");

export interface BerthProcess {
  url: string;
  client: Client;
  dataDir: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL (kill -9) and wait for exit. */
  kill(): Promise<void>;
  /** The process has not exited. */
  alive(): boolean;
}

export interface StartOptions {
  /** Fixture directory name under test/fixtures, or an absolute path. */
  project?: string;
  dataDir?: string;
  env?: Record<string, string>;
  extraArgs?: string[];
  /** `serve` with a role, for scale-out tests (default: `dev`). */
  role?: "api" | "worker" | "all";
}

export function newDataDir(): string {
  return mkdtempSync(join(tmpdir(), "berth-test-"));
}

async function spawnBerth(options: StartOptions): Promise<{ child: ChildProcess; dataDir: string; output: () => string }> {
  const project = options.project?.startsWith("/") ? options.project : join(FIXTURES, options.project ?? "graphs");
  const dataDir = options.dataDir ?? newDataDir();
  const command = options.role ? ["serve", "--role", options.role] : ["dev"];
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOG_LEVEL: "info",
    ...(await backendEnv(dataDir)),
    ...options.env,
  };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  const child = spawn(
    process.execPath,
    [BERTH_BIN, ...command, project, "--port", "0", "--data-dir", dataDir, ...(options.extraArgs ?? [])],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let text = "";
  child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return { child, dataDir, output: () => text };
}

/** Starts `berth dev` (or `serve --role`) on a free port and resolves once it listens (a worker: once ready). */
export async function startBerth(options: StartOptions = {}): Promise<BerthProcess> {
  const { child, dataDir, output } = await spawnBerth(options);
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"agent server listening"|"msg":"worker ready"/.exec(output());
      if (match) {
        child.stdout!.off("data", onData);
        child.off("exit", onExit);
        resolve(match[1] ?? "");
      }
    };
    const onExit = (code: number | null) => reject(new Error(`berth dev exited (${code}) before listening:\n${output()}`));
    child.stdout!.on("data", onData);
    child.once("exit", onExit);
  });
  const exited = once(child, "exit");
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(name);
      await exited;
    }
  };
  return {
    url,
    client: new Client({ apiUrl: url }),
    dataDir,
    output,
    stop: () => signal("SIGTERM"),
    kill: () => signal("SIGKILL"),
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

/** Runs `berth dev` expecting it to fail at start; resolves with its exit code and output. */
export async function runBerthExpectingFailure(options: StartOptions): Promise<{ code: number | null; output: string }> {
  const { child, output } = await spawnBerth(options);
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, output: output() };
}

/** fetch with a JSON body; resolves with status, headers and the parsed JSON body (or null). */
export async function request(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
