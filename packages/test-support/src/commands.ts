// Commands run to their end in a test, their output collected: `berth` itself, npm, the official CLI.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { BERTH_BIN } from "./paths.js";

/** How a command ended, and all it printed. */
export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed (default: no stdin at all). */
  input?: string;
  /** Sees the output so far after every chunk. */
  onStdout?: (soFar: string) => void;
}

/** Runs `command` to its end, collecting its output. */
export async function runCommand(command: string, args: string[], options: CommandOptions = {}): Promise<CommandRun> {
  const { cwd, env, input, onStdout } = options;
  const child = spawn(command, args, { cwd, env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
  child.stdin?.end(input);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    onStdout?.(stdout);
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

/** `berth <args>` of this checkout (or the `berth` script `bin`), run to its end. */
export function runBerth(args: string[], options: CommandOptions & { bin?: string } = {}): Promise<CommandRun> {
  const { bin = BERTH_BIN, ...rest } = options;
  return runCommand(process.execPath, [bin, ...args], rest);
}
