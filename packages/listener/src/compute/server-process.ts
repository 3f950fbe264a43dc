import type { ChildProcess } from "node:child_process";
import { signalSandboxed } from "../process/process-tree.js";
import type { PlanLimits } from "../process/spawn-plan.js";
import { type OutputLine, OutputTail, onLines, parseStderrLine, parseStdoutLine } from "./process-output.js";
import type { Exit, LaunchedProcess } from "./launched-process.js";

/** After `exit`, how long the last output may take to arrive before the exit is reported anyway. */
const OUTPUT_DRAIN_MS = 500;

/**
 * One agent-server child process: its output (parsed, remembered, passed on),
 * the URL it announced, and its exit.
 */
export class ServerProcess implements LaunchedProcess {
  readonly tail = new OutputTail();
  /** Resolves once the process is gone and its output read (or shortly after, if a grandchild keeps the pipes open). */
  readonly exited: Promise<Exit>;
  /** The URL of the "agent server listening" line. */
  readonly listening: Promise<string>;
  /** The graphs that line says loaded. */
  graphs: readonly string[] | undefined;
  private gone = false;

  constructor(
    private readonly child: ChildProcess,
    onLine: (line: OutputLine) => void,
    /** The child is bwrap around the server (see SpawnPlan.sandboxed). */
    private readonly sandboxed = false,
    /** Its cgroup: read and removed once it is gone, what the limits did goes into its exit. */
    limits?: PlanLimits,
  ) {
    let announce: (url: string) => void = () => {};
    this.listening = new Promise((resolve) => (announce = resolve));
    if (child.stdout) {
      onLines(child.stdout, (raw) => {
        const line = parseStdoutLine(raw);
        this.tail.push(line.message, false);
        if (line.entry?.msg === "agent server listening" && typeof line.entry.url === "string") {
          const graphs = line.entry.graphs;
          this.graphs = Array.isArray(graphs) ? graphs.map(String) : undefined;
          announce(line.entry.url);
        }
        onLine(line);
      });
    }
    if (child.stderr) {
      onLines(child.stderr, (raw) => {
        const line = parseStderrLine(raw);
        this.tail.push(line.message, true);
        onLine(line);
      });
    }
    const exited = new Promise<Exit>((resolve) => {
      child.once("error", (error) => {
        // Without a pid the spawn failed and no `exit` follows.
        if (child.pid === undefined) {
          this.gone = true;
          resolve({ code: null, signal: null, error });
        }
      });
      child.once("exit", (code, signal) => {
        this.gone = true;
        // `close` follows once stdout and stderr are read: the last lines are the reason of a crash.
        child.once("close", () => resolve({ code, signal }));
        setTimeout(() => resolve({ code, signal }), OUTPUT_DRAIN_MS).unref();
      });
    });
    this.exited = limits ? exited.then(async (exit) => ({ ...exit, limits: await limits.finish() })) : exited;
  }

  /** The pid of the child: bwrap's when sandboxed (killing it kills the whole sandbox). */
  get pid(): number {
    return this.child.pid ?? 0;
  }

  hasExited(): boolean {
    return this.gone;
  }

  /** SIGTERM (graceful: the agent server finishes open responses and runs), SIGKILL after `graceMs`. */
  async terminate(graceMs: number): Promise<Exit> {
    if (this.gone) return this.exited;
    // Sandboxed, SIGTERM goes to the server inside; a sandbox still being set up has none yet, and bwrap's own SIGTERM ends it.
    if (!this.sandboxed || this.child.pid === undefined || !signalSandboxed(this.child.pid, "SIGTERM"))
      this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
