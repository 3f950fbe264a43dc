import { mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { formatBytes } from "./archive-rules.js";
import type { BuildSandbox } from "./build-sandbox.js";
import { commandEnv } from "./command-env.js";
import { locateConfig } from "./config-file.js";
import { compileTypeScript } from "./compile-step.js";
import { BuildError, type BuildLog } from "./errors.js";
import { checkGraphs, type GraphChecker } from "./graph-check.js";
import { installDependencies } from "./install.js";
import { runCommand } from "./run-command.js";
import { safeUnpack } from "./safe-unpack.js";

export type { BuildSandbox } from "./build-sandbox.js";
export { BuildError, type BuildLog, type BuildLogEntry } from "./errors.js";
export type { GraphChecker } from "./graph-check.js";

export interface BuildRequest {
  /** The uploaded .tar.gz. */
  tarball: string;
  /** Relative path of langgraph.json inside the tarball. */
  graphConfigPath: string;
  /** Runs from the tarball root; autodetected from the lockfile when absent. */
  installCommand?: string | null;
  /** Runs in the folder holding the config, after the install. */
  buildCommand?: string | null;
  /** An empty directory, which becomes the artifact. */
  workDir: string;
  /**
   * Installed node_modules by lockfile, shared by the builds of one workspace
   * (and, without a sandbox, the package managers' caches and HOME).
   */
  cacheDir: string;
  /** Where the commands run (install, build_command, graph check); without one, as the listener's own user. */
  sandbox?: BuildSandbox;
  log: BuildLog;
  signal?: AbortSignal;
  limits?: { maxBytes?: number; maxEntries?: number; timeoutMs?: number };
  /**
   * Variables for the graph check only (e.g. the deployment's secrets): graph
   * modules often create model clients at import, which read API keys then.
   * Never given to install or build commands, which run dependencies' scripts.
   */
  checkEnv?: Record<string, string>;
  /**
   * How the last step checks that every graph loads: by default `berth check`
   * in a process of its own; on local compute the listener starts the
   * revision's agent server instead, which loads them the same way and then
   * serves (listener/placements/local/build-starts-server.ts).
   */
  checkGraphs?: GraphChecker;
}

export interface BuildResult {
  /** Absolute path of langgraph.json in workDir. */
  configFile: string;
  installCacheHit: boolean;
  durationMs: number;
}

/**
 * Builds an `internal_source` revision's tarball into a runnable project:
 * unpack (refusing unsafe archives) → find langgraph.json → install
 * dependencies (cached by lockfile) → build_command → load every graph once.
 * Every failure the user can fix is a BuildError whose message says which
 * step failed and why; the log gets every command's output and a line per step.
 */
export async function buildSource(request: BuildRequest): Promise<BuildResult> {
  const started = Date.now();
  const { log, signal, limits = {}, sandbox } = request;
  const workDir = resolve(request.workDir);
  const cacheDir = resolve(request.cacheDir);
  const env = sandbox?.env ?? commandEnv(cacheDir);
  if (!sandbox) await mkdir(env.HOME, { recursive: true });

  const step = async <T>(title: string, run: () => Promise<T>, summary: (value: T) => string): Promise<T> => {
    if (signal?.aborted) throw new BuildError(`The build was interrupted (before: ${title})`);
    const stepStarted = Date.now();
    log({ level: "info", message: `==> ${title}` });
    const value = await run();
    log({ level: "info", message: `${summary(value)} (${seconds(Date.now() - stepStarted)})` });
    return value;
  };

  await step(
    "Unpacking the source tarball",
    () => safeUnpack(request.tarball, workDir, limits, signal),
    ({ entries, bytes }) => `Unpacked ${entries} entries, ${formatBytes(bytes)}`,
  );
  // Unpacked by the listener; built by the build's user.
  await sandbox?.handOver(workDir);
  const configFile = await step(
    "Finding the graph config",
    () => locateConfig(workDir, request.graphConfigPath),
    () => `Found ${request.graphConfigPath}`,
  );
  const install = await step(
    "Installing dependencies",
    () =>
      installDependencies({
        root: workDir,
        installCommand: request.installCommand,
        cacheDir,
        env,
        log,
        signal,
        timeoutMs: limits.timeoutMs,
        sandbox,
      }),
    ({ plan, cacheHit }) =>
      !plan ? "Nothing to install" : cacheHit ? "Dependencies restored from the install cache" : "Dependencies installed",
  );
  const buildCommand = request.buildCommand?.trim();
  if (buildCommand) {
    await step(
      `Running build_command: ${buildCommand}`,
      () =>
        runCommand({
          command: buildCommand,
          label: "build_command",
          cwd: dirname(configFile),
          env,
          log,
          signal,
          timeoutMs: limits.timeoutMs,
          spawnPlan: sandbox?.plan,
        }),
      () => "build_command succeeded",
    );
  }
  await step(
    "Compiling TypeScript ahead of time",
    () => compileTypeScript({ configFile, workDir, env, log, signal, timeoutMs: limits.timeoutMs, sandbox }),
    (outcome) => (outcome === "compiled" ? "Compiled" : "Sources kept"),
  );
  await step(
    "Checking that every graph loads",
    () =>
      (request.checkGraphs ?? checkGraphs)({
        configFile,
        workDir,
        env: { ...env, ...request.checkEnv },
        log,
        signal,
        timeoutMs: limits.timeoutMs,
        sandbox,
      }),
    () => "Every graph loads",
  );
  const durationMs = Date.now() - started;
  log({ level: "info", message: `Build finished in ${seconds(durationMs)}` });
  return { configFile, installCacheHit: install.cacheHit, durationMs };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
