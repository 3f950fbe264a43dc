import { COMPILE_USAGE } from "../usage.js";

/**
 * `berth compile`: the build's step that makes the project's TypeScript JavaScript ahead of time, so its server
 * starts without a TypeScript loader. A project it cannot compile safely keeps loading its sources (exit 0, the
 * reason on stderr): compiling is an optimisation, never a reason for a build to fail. A graph that does not load is
 * the check's to report.
 */
export async function compileCommand(argv: string[]): Promise<number> {
  const positionals = argv.filter((arg) => !arg.startsWith("-"));
  if (positionals.length > 1 || positionals.length !== argv.length) {
    process.stderr.write(`berth compile: expected one directory or langgraph.json, got "${argv.join(" ")}"\n\n${COMPILE_USAGE}`);
    return 2;
  }
  // Not the agent server's main entry: a build runs this in a process of its own, and the server is not needed.
  const { compileProject, ConfigError } = await import("@berth/agent-server/compile");
  try {
    const result = await compileProject(positionals[0] ?? ".");
    const seconds = (result.durationMs / 1000).toFixed(2);
    if ("reason" in result) {
      process.stderr.write(`berth compile: warning: sources kept, loaded through tsx: ${result.reason}\n`);
    } else {
      const count = result.compiled.length;
      process.stdout.write(`${count} module${count === 1 ? "" : "s"} compiled in ${seconds} s: ${result.compiled.join(", ")}\n`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`berth compile: ${error.message}\n`);
    return 1;
  }
}
