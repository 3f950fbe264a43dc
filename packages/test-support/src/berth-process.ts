import { Client } from "@langchain/langgraph-sdk";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { backendEnv } from "./backend.js";
import { BERTH_BIN, newDataDir, REPO_ROOT } from "./paths.js";

/** The agent server's fixture projects. */
export const FIXTURES = join(REPO_ROOT, "packages", "agent-server", "test", "fixtures");

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

export interface BerthOptions {
  /** Fixture directory name under test/fixtures, or an absolute path. */
  project?: string;
  dataDir?: string;
  /** Extra environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  extraArgs?: string[];
  /** The `berth` script to run (default: this checkout's), e.g. one installed from the packed tarballs. */
  bin?: string;
  /** Working directory (default: the test's). */
  cwd?: string;
  /** `serve` with a role, for scale-out tests (default: `dev`). */
  role?: "api" | "worker" | "all";
  /** `berth dev` as a developer runs it, supervising a server it restarts on change (default: `--no-reload`, one process). */
  reload?: boolean;
}

/**
 * A fixture's folder, or with BERTH_TEST_HTTP_APP=1 its `langgraph.app.json` where it has one: the same project
 * behind a pass-through `http.app`, so a suite can run again with the project's app in front of the API.
 */
function projectPath(project: string | undefined): string {
  const folder = project?.startsWith("/") ? project : join(FIXTURES, project ?? "graphs");
  const behindApp = join(folder, "langgraph.app.json");
  return process.env.BERTH_TEST_HTTP_APP === "1" && existsSync(behindApp) ? behindApp : folder;
}

async function spawnBerth(options: BerthOptions): Promise<{ child: ChildProcess; dataDir: string; output: () => string }> {
  const project = projectPath(options.project);
  const dataDir = options.dataDir ?? newDataDir();
  const command = options.role ? ["serve", "--role", options.role] : options.reload ? ["dev"] : ["dev", "--no-reload"];
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOG_LEVEL: "info",
    ...(await backendEnv(dataDir)),
    ...options.env,
  };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  const child = spawn(
    process.execPath,
    [options.bin ?? BERTH_BIN, ...command, project, "--port", "0", "--data-dir", dataDir, ...(options.extraArgs ?? [])],
    { env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] },
  );
  let text = "";
  child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  keepOutput(child, dataDir, () => text);
  return { child, dataDir, output: () => text };
}

const unsaved = new Set<() => void>();
process.once("exit", () => {
  for (const save of unsaved) save();
});

/**
 * With BERTH_TEST_SERVER_LOG_DIR set (scripts/run-tests.mjs --stress), each
 * server's whole output is saved there when it exits (or when the test file
 * ends with it still running), so the run can look for 5xx answers no test
 * asserted on.
 */
function keepOutput(child: ChildProcess, dataDir: string, output: () => string): void {
  const dir = process.env.BERTH_TEST_SERVER_LOG_DIR;
  if (!dir) return;
  const save = () => {
    if (!unsaved.delete(save)) return;
    writeFileSync(join(dir, `${basename(dataDir)}-${child.pid}.log`), output());
  };
  unsaved.add(save);
  child.once("close", save);
}

/** Starts `berth dev` (or `serve --role`) on a free port and resolves once it listens (a worker: once ready; its url answers /ok only). */
export async function startBerth(options: BerthOptions = {}): Promise<BerthProcess> {
  const { child, dataDir, output } = await spawnBerth(options);
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const match =
        /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"agent server listening"|(?:"health":"(http:\/\/[^"]+)"[^\n]*)?"msg":"worker ready"/.exec(
          output(),
        );
      if (match) {
        child.stdout!.off("data", onData);
        child.off("exit", onExit);
        resolve(match[1] ?? match[2] ?? "");
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
export async function runBerthExpectingFailure(options: BerthOptions): Promise<{ code: number | null; output: string }> {
  const { child, output } = await spawnBerth(options);
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, output: output() };
}
