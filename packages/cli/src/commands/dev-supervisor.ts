import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { devBanner } from "./dev-banner.js";
import { isFailedMessage, isListeningMessage, SUPERVISED_ENV } from "./dev-child.js";
import { type StandIn, serveUnavailable } from "./dev-stand-in.js";
import { type ProjectWatcher, watchProject } from "./project-watcher.js";
import { devServerEnv, devServerNodeFlags } from "../settings.js";

export interface DevOptions {
  config: string;
  host: string;
  port: number;
  dataDir?: string;
  logFormat: "json" | "pretty";
}

interface ServerProcess {
  child: ChildProcess;
  /** Its exit code (1 when a signal ended it). */
  exited: Promise<number>;
  /** Where it listens, once it said so. */
  url?: string;
  /** The supervisor asked it to stop. */
  stopping: boolean;
}

const say = (line: string) => process.stderr.write(`berth dev: ${line}\n`);

/** `a.ts, b.ts and 3 more`. */
function listed(paths: string[]): string {
  const shown = paths.slice(0, 3).join(", ");
  return paths.length > 3 ? `${shown} and ${paths.length - 3} more` : shown;
}

/** Whether the path given names a langgraph.json (a file, or a folder holding one): without one there is nothing to fix. */
function hasLangGraphJson(config: string): boolean {
  const path = resolve(config);
  if (!existsSync(path)) return false;
  return !statSync(path).isDirectory() || existsSync(join(path, "langgraph.json"));
}

/** A host as a URL writes it (an IPv6 address in brackets). */
function hostInUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** The folder of the project's langgraph.json. */
function projectFolder(config: string): string {
  const path = resolve(config);
  return existsSync(path) && statSync(path).isDirectory() ? path : dirname(path);
}

/**
 * `berth dev` with reload: loads nothing of the agent server itself. It runs
 * the server as a child process (`berth dev --no-reload`) and, when the
 * project changes, stops it (SIGTERM: its graceful shutdown) and starts a new
 * one on the same port and data directory. ES modules cannot be unloaded, so
 * a new process is the only way to load changed code.
 */
class DevSupervisor {
  private server: ServerProcess | undefined;
  private port: number;
  private readonly pending = new Set<string>();
  private started = false;
  /** The start banner was printed. */
  private announced = false;
  private reloading = false;
  private stopping = false;
  private watcher: ProjectWatcher | undefined;
  /** What answers on the port while no server does (dev-stand-in.ts). */
  private standIn: Promise<StandIn | undefined> | undefined;
  /** Why the last server launched did not start, as it told the supervisor (dev-child.ts). */
  private failure: string | undefined;

  constructor(private readonly options: DevOptions) {
    this.port = options.port;
  }

  /**
   * Watches the project and starts the first server; its exit code when that does not start for a reason no change
   * of the project fixes (a port in use, a bad setting, no langgraph.json at the path given).
   */
  async start(): Promise<number | undefined> {
    const folder = projectFolder(this.options.config);
    const ignored = this.options.dataDir === undefined ? [] : [this.options.dataDir];
    this.watcher = watchProject(folder, ignored, (paths) => this.changed(paths));
    const result = await this.launch();
    if (typeof result === "number") {
      const waiting = await this.waitForFix(result, folder);
      if (!waiting) {
        this.watcher.close();
        return result;
      }
    } else {
      this.announce(result);
    }
    this.started = true;
    say(`reloads when a source file, langgraph.json or .env under ${folder} changes (--no-reload: never)`);
    if (this.pending.size > 0) void this.reloadWhilePending();
    return undefined;
  }

  /**
   * The first server did not start: when the project's own code or langgraph.json is why (the server said so, and
   * printed it), answers on the port with it and resolves true; false when exiting is the answer.
   */
  private async waitForFix(code: number, folder: string): Promise<boolean> {
    const failure = this.failure;
    if (failure === undefined || !hasLangGraphJson(this.options.config)) return false;
    if (!(await this.answerUnavailable(failure))) {
      if (this.stopping) return true; // Ctrl-C meanwhile: stop() resolves the exit code
      say(`${this.options.host}:${this.port} is already in use; choose another with --port`);
      return false;
    }
    const url = `http://${hostInUrl(this.options.host)}:${this.port}`;
    say(
      `the project does not load (exit code ${code}); waiting for a fix: ${url} answers 503 with the error above until a change under ${folder} fixes it`,
    );
    return true;
  }

  /** The start banner, once: when the first server listens (at start, or at the change that fixed a broken project). */
  private announce(url: string): void {
    if (this.announced) return;
    this.announced = true;
    process.stderr.write(devBanner(url));
  }

  /** Stops the server and watching; resolves with the server's exit code. A second call kills the server at once. */
  async stop(): Promise<number> {
    const server = this.server;
    if (this.stopping) {
      server?.child.kill("SIGKILL");
      return server ? server.exited : 0;
    }
    this.stopping = true;
    this.watcher?.close();
    await this.closeStandIn();
    if (!server) return 0;
    // A server already stopping for a reload is not signalled again: a second SIGTERM would end it abruptly.
    if (!server.stopping) {
      server.stopping = true;
      server.child.kill("SIGTERM");
    }
    return server.exited;
  }

  private changed(paths: string[]): void {
    for (const path of paths) this.pending.add(path);
    if (this.started && !this.reloading) void this.reloadWhilePending();
  }

  private async reloadWhilePending(): Promise<void> {
    this.reloading = true;
    while (this.pending.size > 0 && !this.stopping) {
      const paths = [...this.pending].sort();
      this.pending.clear();
      await this.reload(paths);
    }
    this.reloading = false;
  }

  private async reload(paths: string[]): Promise<void> {
    say(`${listed(paths)} changed; reloading`);
    const began = performance.now();
    const old = this.server;
    if (old) {
      old.stopping = true;
      old.child.kill("SIGTERM");
      await old.exited;
    }
    if (this.stopping) return;
    await this.closeStandIn();
    const result = await this.launch();
    if (this.stopping) return;
    if (typeof result === "number") {
      // Said once the port answers with why: a client told so finds the 503.
      await this.answerUnavailable(
        this.failure ?? `the server did not start (exit code ${result}); it starts again at the next change`,
      );
      say(`the server did not start (exit code ${result}); waiting for the next change`);
      return;
    }
    const problem = await healthProblem(result);
    const ms = Math.round(performance.now() - began);
    say(problem === undefined ? `reloaded in ${ms} ms` : `restarted in ${ms} ms, but ${result}/ok ${problem}`);
    this.announce(result);
  }

  /** A server process: resolves with its URL once it listens, or with its exit code when it exits first. */
  private async launch(): Promise<string | number> {
    const { config, host, dataDir } = this.options;
    const args = ["dev", config, "--host", host, "--port", String(this.port), "--no-reload", `--${this.options.logFormat}-logs`];
    if (dataDir !== undefined) args.push("--data-dir", dataDir);
    // Its own process group: a terminal's Ctrl-C reaches the supervisor only, which stops the server once.
    const child = spawn(process.execPath, [...devServerNodeFlags(), ...process.execArgv, process.argv[1]!, ...args], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      detached: true,
      env: { ...devServerEnv(), [SUPERVISED_ENV]: "1" },
    });
    const exited = new Promise<number>((resolve) => {
      child.once("exit", (code) => resolve(code ?? 1));
      child.once("error", (error) => {
        say(`could not start the server: ${error.message}`);
        resolve(1);
      });
    });
    const server: ServerProcess = { child, exited, stopping: false };
    this.server = server;
    this.failure = undefined;
    const listening = new Promise<string>((resolve) => {
      child.on("message", (message) => {
        if (isListeningMessage(message)) resolve(message.url);
        if (isFailedMessage(message)) this.failure = message.reason;
      });
    });
    void exited.then((code) => this.exited(server, code));
    const result = await Promise.race([listening, exited]);
    if (typeof result === "string") {
      server.url = result;
      // A free port (--port 0) is kept: clients keep their URL across reloads.
      this.port = Number(new URL(result).port) || this.port;
    }
    return result;
  }

  private exited(server: ServerProcess, code: number): void {
    if (this.server !== server) return;
    this.server = undefined;
    if (!server.stopping && server.url !== undefined) {
      const reason = `the server exited (code ${code}); it starts again at the next change`;
      void this.answerUnavailable(reason).then(() => say(reason));
    }
  }

  /**
   * Answers on the port with 503 and `reason` until the next server starts (closeStandIn); resolves once it listens,
   * with it, or undefined when the port is taken (said here once a server has served; the first start exits on it).
   */
  private async answerUnavailable(reason: string): Promise<StandIn | undefined> {
    if (this.stopping) return undefined;
    if (this.standIn) return this.standIn;
    this.standIn = serveUnavailable(this.options.host, this.port, reason).then((standIn) => {
      if (!standIn && this.started) say(`port ${this.port} is taken: requests are refused until the next change`);
      // A free port (--port 0) a stand-in got at the first start is kept by the servers after it.
      if (standIn) this.port = standIn.port;
      return standIn;
    });
    return this.standIn;
  }

  private async closeStandIn(): Promise<void> {
    const standIn = this.standIn;
    this.standIn = undefined;
    await (await standIn)?.close();
  }
}

/** Why `<url>/ok` does not answer 200, or undefined when it does. */
async function healthProblem(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(5_000) });
    await response.body?.cancel();
    return response.ok ? undefined : `answers ${response.status}`;
  } catch (error) {
    return `does not answer (${(error as Error).message})`;
  }
}

/**
 * Runs `berth dev` with reload until SIGINT or SIGTERM; resolves with the
 * exit code. A project that does not load, at the first start or at a reload,
 * is answered for with 503 until a change fixes it; what no change of the
 * project fixes (a port in use, a bad setting, no langgraph.json) exits as
 * `--no-reload` would.
 */
export async function superviseDev(options: DevOptions): Promise<number> {
  const supervisor = new DevSupervisor(options);
  const stopped = new Promise<number>((resolve) => {
    const stop = () => void supervisor.stop().then(resolve);
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  const failed = await supervisor.start();
  return failed ?? stopped;
}
