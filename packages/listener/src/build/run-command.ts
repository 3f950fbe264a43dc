import { spawn } from "node:child_process";
import { commandOf, limitNotes, outOfMemory, type SpawnPlan, type SpawnPlanner, unsandboxed } from "../process/spawn-plan.js";
import { BuildError, type BuildLog } from "./errors.js";

export interface RunCommandOptions {
  /** A shell command line, run with `/bin/sh -c`. */
  command: string;
  /** How the command is named in errors, e.g. "install_command" or "build_command". */
  label: string;
  cwd: string;
  /** The complete environment of the command (see commandEnv): nothing is inherited. */
  env: Record<string, string>;
  log: BuildLog;
  /** Default 900 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** How the shell is started (a build sandbox's); default: as a plain child process. */
  spawnPlan?: SpawnPlanner;
}

export const DEFAULT_COMMAND_TIMEOUT_MS = 900_000;

/** Lines of output quoted in the error of a failed command. */
const TAIL_LINES = 5;
/** A single line longer than this (a minified bundle printed by mistake) is cut in the log. */
const MAX_LINE = 4000;
/** After SIGTERM, the process group gets this long before SIGKILL. */
const KILL_GRACE_MS = 3000;
/** After the shell exits, how long its output may take to drain (a leftover background process could hold the pipes open). */
const DRAIN_MS = 2000;
/** How long a step waits, once its command exited, for the processes of its group it killed to be gone. */
const GROUP_EXIT_WAIT_MS = 2000;

/**
 * Runs a command in its own process group and streams every output line to
 * `log` (stdout as info, stderr as error). Resolves when it exits with 0;
 * otherwise throws a BuildError quoting the last lines of its output. A
 * timeout or an abort kills the whole group (the shell and everything it
 * started: npm's children, a dev server started by mistake), not just the shell.
 */
export async function runCommand(options: RunCommandOptions): Promise<void> {
  const { command, label, cwd, env, signal } = options;
  const described = `${label} \`${command}\``;
  if (signal?.aborted) throw new BuildError(`${described} was interrupted`);
  let plan: SpawnPlan;
  try {
    plan = await (options.spawnPlan ?? unsandboxed)(["/bin/sh", "-c", command], cwd, env);
  } catch (error) {
    throw new BuildError(`${described} could not be started: ${(error as Error).message}`);
  }
  try {
    await runPlanned(plan, described, options);
  } finally {
    await plan.release?.();
  }
}

function runPlanned(plan: SpawnPlan, described: string, options: RunCommandOptions): Promise<void> {
  const { log, signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  return new Promise<void>((resolve, reject) => {
    // detached: the child leads a new process group, so -pid reaches all of its descendants. In a
    // sandbox, bwrap leads it: killing it takes down the sandbox's pid namespace, whatever runs there.
    // With limits, through the wrapper that joins the command's cgroup before it runs (see spawn-plan.ts).
    const started = commandOf(plan);
    const child = spawn(started.file, started.args, {
      cwd: plan.cwd,
      env: plan.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tail: string[] = [];
    let stopReason: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;

    const emit = (level: "info" | "error", line: string) => {
      const message = line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}… (${line.length - MAX_LINE} more characters)` : line;
      log({ level, message });
      if (message.trim() !== "") {
        tail.push(message.length > 300 ? `${message.slice(0, 300)}…` : message);
        if (tail.length > TAIL_LINES) tail.shift();
      }
    };
    const stdout = lineSplitter((line) => emit("info", line));
    const stderr = lineSplitter((line) => emit("error", line));
    // As strings, so a multi-byte character split across chunks is decoded whole.
    child.stdout.setEncoding("utf8").on("data", stdout.push);
    child.stderr.setEncoding("utf8").on("data", stderr.push);

    const killGroup = (signalName: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signalName);
      } catch {
        // The group is already gone.
      }
    };
    const stop = (reason: string) => {
      if (stopReason !== undefined) return;
      stopReason = reason;
      killGroup("SIGTERM");
      killTimer = setTimeout(() => killGroup("SIGKILL"), KILL_GRACE_MS);
      killTimer.unref();
    };
    const limit = timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${(timeoutMs / 1000).toFixed(1)} s`;
    const timer = setTimeout(() => stop(`timed out after ${limit}`), timeoutMs);
    const onAbort = () => stop("was interrupted");
    signal?.addEventListener("abort", onAbort, { once: true });

    let settled = false;
    const settle = (error?: BuildError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (error) reject(error);
      else resolve();
    };
    child.on("error", (error) => {
      // Only a failure to start at all (e.g. cwd missing); "exit" never follows it.
      if (child.pid === undefined) {
        plan.limits?.discard();
        settle(new BuildError(`${described} could not be started: ${error.message}`));
      }
    });
    child.on("exit", (code, signalName) => {
      clearTimeout(timer);
      // Whatever the shell left running in the background must not outlive the step.
      killGroup("SIGKILL");
      if (killTimer) clearTimeout(killTimer);
      const limitHits = plan.limits?.finish();
      const finish = async () => {
        stdout.flush();
        stderr.flush();
        if (child.pid !== undefined) await groupGone(child.pid, GROUP_EXIT_WAIT_MS);
        const hits = await limitHits;
        if (stopReason !== undefined) return settle(new BuildError(`${described} ${stopReason}`));
        if (code === 0) return settle();
        const notes = limitNotes(hits) ? ` (${limitNotes(hits)})` : "";
        const quoted = tail.length > 0 ? `: ${tail.join(" | ")}` : "";
        if (hits?.outOfMemoryMb)
          return settle(new BuildError(`${described} was ${outOfMemory(hits.outOfMemoryMb)}${notes}${quoted}`));
        const status = code !== null ? `exit code ${code}` : `signal ${signalName}`;
        const hint = code === 127 ? " (command not found on the listener's PATH)" : "";
        settle(new BuildError(`${described} failed with ${status}${hint}${notes}${quoted}`));
      };
      // Let the pipes drain so the last lines make it into the log and the error.
      const drained = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        void finish();
      }, DRAIN_MS);
      child.once("close", () => {
        clearTimeout(drained);
        void finish();
      });
    });
  });
}

/**
 * Resolves once no process of the group `pgid` is left, or after `withinMs`: a killed process is gone only once it
 * next runs (and is reaped), and a step must not end while what it started still runs. No event tells of the death of
 * processes that are not this one's children (the shell's background jobs): their group is looked at every 10 ms.
 */
async function groupGone(pgid: number, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    if (Date.now() >= deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Splits a text stream into lines, also across chunk boundaries. */
function lineSplitter(onLine: (line: string) => void): { push: (chunk: string) => void; flush: () => void } {
  let pending = "";
  return {
    push: (chunk) => {
      pending += chunk;
      const lines = pending.split(/\r?\n/);
      pending = lines.pop() ?? "";
      for (const line of lines) onLine(line);
      // A very long line without a newline must not grow without bound.
      if (pending.length > MAX_LINE * 4) {
        onLine(pending);
        pending = "";
      }
    },
    flush: () => {
      if (pending !== "") onLine(pending);
      pending = "";
    },
  };
}
