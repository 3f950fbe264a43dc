import { dirname } from "node:path";
import { BuildError } from "./errors.js";
import { berthCommand, type GraphCheckOptions } from "./graph-check.js";
import { runCommand } from "./run-command.js";

/** How `berth compile` says it kept the sources (stderr): not an error of the build. */
const WARNING_PREFIX = "berth compile: warning: ";

/**
 * Transpiles the project's TypeScript modules ahead of time (`berth compile`, in the build's sandbox like every
 * command that reads the project), so the revision's server starts without a TypeScript loader. Never fails the
 * build: a project it cannot compile (or a compile that fails) keeps loading its sources through tsx, and the graph
 * check that follows reports a graph that does not load.
 */
export async function compileTypeScript(options: GraphCheckOptions): Promise<"compiled" | "kept"> {
  let kept = false;
  try {
    await runCommand({
      command: berthCommand("compile", options),
      label: "compile",
      cwd: dirname(options.configFile),
      env: options.env,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      spawnPlan: options.sandbox?.plan,
      log: (entry) => {
        if (entry.level === "error" && entry.message.startsWith(WARNING_PREFIX)) {
          kept = true;
          options.log({ level: "info", message: entry.message.slice(WARNING_PREFIX.length) });
        } else options.log(entry);
      },
    });
  } catch (error) {
    if (!(error instanceof BuildError) || options.signal?.aborted) throw error;
    options.log({ level: "info", message: `Sources kept, loaded through tsx: ${error.message}` });
    return "kept";
  }
  return kept ? "kept" : "compiled";
}
