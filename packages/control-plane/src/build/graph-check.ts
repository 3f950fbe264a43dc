import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { BuildError, type BuildLog } from "./errors.js";
import { runCommand } from "./run-command.js";

/** The berth CLI of this checkout (packages/control-plane/src/build → packages/cli/bin). */
export const BERTH_BIN = fileURLToPath(new URL("../../../cli/bin/berth.mjs", import.meta.url));

export interface GraphCheckOptions {
  configFile: string;
  /** The artifact directory: its absolute path is cut from messages shown to users. */
  workDir: string;
  env: Record<string, string>;
  log: BuildLog;
  signal?: AbortSignal;
  timeoutMs?: number;
}

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
  const { configFile, workDir, log } = options;
  const command = `${shellQuote(process.execPath)} ${shellQuote(BERTH_BIN)} check ${shellQuote(configFile)}`;
  let failure: string | undefined;
  try {
    await runCommand({
      command,
      label: "graph check",
      cwd: dirname(configFile),
      env: options.env,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      log: (entry) => {
        if (entry.level === "error" && entry.message.startsWith(FAILURE_PREFIX) && !entry.message.startsWith(WARNING_PREFIX)) {
          failure = entry.message.slice(FAILURE_PREFIX.length);
        }
        log(entry);
      },
    });
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    const reason = failure !== undefined ? `A graph failed to load: ${failure}` : error.message;
    throw new BuildError(withoutPrefix(reason, workDir), { cause: error });
  }
}

/** `/var/lib/berth/builds/abc/src/agent.ts` → `src/agent.ts`: the user knows their tarball, not our directories. */
function withoutPrefix(message: string, workDir: string): string {
  return message.split(`${workDir.replace(/\/+$/, "")}/`).join("");
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
