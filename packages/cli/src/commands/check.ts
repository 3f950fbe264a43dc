import { CHECK_USAGE } from "../usage.js";
import { loadAgentServer } from "./load-agent-server.js";

/** After the answer, how long a graph module's open handles (clients, timers) may keep the process alive. */
const EXIT_GRACE_MS = 1000;

/** `berth check`: the build's "does every graph load" step, also usable by hand or in CI. */
export async function checkCommand(argv: string[]): Promise<number> {
  const positionals = argv.filter((arg) => !arg.startsWith("-"));
  if (positionals.length > 1 || positionals.length !== argv.length) {
    process.stderr.write(`berth check: expected one directory or langgraph.json, got "${argv.join(" ")}"\n\n${CHECK_USAGE}`);
    return 2;
  }
  const config = positionals[0] ?? ".";
  const { checkProject, ConfigError, GraphLoadError } = await loadAgentServer(config, { compiled: true });
  let code: number;
  try {
    const { graphs, warnings } = await checkProject(config);
    for (const warning of warnings) process.stderr.write(`berth check: warning: ${warning}\n`);
    process.stdout.write(`${graphs.length} graph${graphs.length === 1 ? "" : "s"} loaded: ${graphs.join(", ")}\n`);
    code = 0;
  } catch (error) {
    if (!(error instanceof ConfigError || error instanceof GraphLoadError)) throw error;
    process.stderr.write(`berth check: ${error.message}\n`);
    code = 1;
  }
  // A graph module may open connections or timers at import that would keep
  // this one-shot process alive (and a build waiting for it) forever.
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  return code;
}
