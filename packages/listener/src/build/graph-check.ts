import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuildSandbox } from "./build-sandbox.js";
import { BuildError, type BuildLog } from "./errors.js";
import { runCommand } from "./run-command.js";

/** The berth CLI of this checkout (packages/listener/src/build → packages/cli/bin). */
export const BERTH_BIN = fileURLToPath(new URL("../../../cli/bin/berth.mjs", import.meta.url));

export interface GraphCheckOptions {
  configFile: string;
  /** The artifact directory: its absolute path is cut from messages shown to users. */
  workDir: string;
  env: Record<string, string>;
  log: BuildLog;
  signal?: AbortSignal;
  timeoutMs?: number;
  sandbox?: BuildSandbox;
}

/** Resolves once every graph of the project loads; rejects with a BuildError saying why one does not. */
export type GraphChecker = (options: GraphCheckOptions) => Promise<void>;

/** How `berth check` prefixes its reason for failing (stderr), and its warnings, which are not reasons. */
const FAILURE_PREFIX = "berth check: ";
const WARNING_PREFIX = "berth check: warning: ";

/**
 * Loads every graph of the project in a separate process (`berth check`),
 * the way the agent server will load them: a graph that fails at import
 * fails the build, with its error as the reason, rather than the deploy.
 * A subprocess, because importing user modules into the listener would run
 * their code there and keep them loaded for good.
 */
export async function checkGraphs(options: GraphCheckOptions): Promise<void> {
  const { configFile, workDir, log, sandbox } = options;
  const command = berthCommand("check", options);
  let failure: string | undefined;
  // The user knows their tarball, not the build's directories (nor where the sandbox mounts them).
  const shown = (message: string) => withoutPrefix(withoutPrefix(message, workDir), sandbox?.inside(workDir));
  try {
    await runCommand({
      command,
      label: "graph check",
      cwd: dirname(configFile),
      env: options.env,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      spawnPlan: sandbox?.plan,
      log: (entry) => {
        if (entry.level === "error" && entry.message.startsWith(FAILURE_PREFIX) && !entry.message.startsWith(WARNING_PREFIX)) {
          // Not logged here: it becomes the build's reason, which the build logs once.
          failure = entry.message.slice(FAILURE_PREFIX.length);
          return;
        }
        log({ ...entry, message: shown(entry.message) });
      },
    });
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    const reason = failure !== undefined ? `A graph failed to load: ${failure}` : error.message;
    throw new BuildError(shown(reason), { cause: error });
  }
}

/** The shell command running `berth <subcommand> <langgraph.json>` with this checkout's CLI, inside the sandbox if any. */
export function berthCommand(
  subcommand: string,
  { configFile, sandbox }: Pick<GraphCheckOptions, "configFile" | "sandbox">,
): string {
  const berthBin = sandbox?.berthBin ?? BERTH_BIN;
  return `${shellQuote(process.execPath)} ${shellQuote(berthBin)} ${subcommand} ${shellQuote(sandbox?.inside(configFile) ?? configFile)}`;
}

/** `/var/lib/berth/builds/abc/src/agent.ts` → `src/agent.ts`: the user knows their tarball, not our directories. */
function withoutPrefix(message: string, workDir: string | undefined): string {
  if (workDir === undefined) return message;
  return message.split(`${workDir.replace(/\/+$/, "")}/`).join("");
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
