import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CommandRun, REPO_ROOT, runCommand } from "@berth/test-support";

/** The project the official CLI deploys in these tests. */
export const CLI_APP = fileURLToPath(new URL("../fixtures/cli-app", import.meta.url));

/** The official CLI as its users install it, pinned: what Berth is tested against. */
export const LANGGRAPH_CLI_VERSION = "1.5.1";
const PACKAGE = `@langchain/langgraph-cli@${LANGGRAPH_CLI_VERSION}`;
const CACHE_DIR = join(REPO_ROOT, "node_modules", ".cache", "berth-tests", `langgraph-cli-${LANGGRAPH_CLI_VERSION}`);
/** Written once npm finished: a folder without it is a broken install. */
const COMPLETE = ".berth-install-complete";

/**
 * The path of the `langgraphjs` bin, installed from the npm registry into a
 * cache folder on first use (reused afterwards). No registry, no test: this
 * throws, it does not skip.
 */
export async function ensureLangGraphCli(): Promise<string> {
  const bin = join(CACHE_DIR, "node_modules", "@langchain", "langgraph-cli", "dist", "cli", "cli.mjs");
  if (existsSync(join(CACHE_DIR, COMPLETE)) && existsSync(bin)) return bin;
  // Installed beside the cache folder, then moved in: a run that dies half-way leaves nothing that looks installed.
  const partial = `${CACHE_DIR}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  const npm = await runCommand("npm", ["install", "--no-audit", "--no-fund", "--prefix", partial, PACKAGE], { env: process.env });
  if (npm.code !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(
      `Could not install ${PACKAGE} from the npm registry (npm exited ${npm.code}); the official CLI tests need it.\n${npm.stdout}\n${npm.stderr}`,
    );
  }
  writeFileSync(join(partial, COMPLETE), `${PACKAGE}\n`);
  // A folder without the marker can only be a leftover (the marker goes in before the move).
  if (!existsSync(join(CACHE_DIR, COMPLETE))) rmSync(CACHE_DIR, { recursive: true, force: true });
  try {
    renameSync(partial, CACHE_DIR);
  } catch (err) {
    // Another test file installed it meanwhile, and may be running it: keep theirs.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST") throw err;
    rmSync(partial, { recursive: true, force: true });
  }
  return bin;
}

/**
 * The environment the CLI runs in: no LangSmith/LangChain/LangGraph settings
 * of whoever runs the tests, and its usage analytics off so that it sends
 * nothing outside this machine.
 */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(LANGSMITH_|LANGCHAIN_|LANGGRAPH_)/.test(name)) env[name] = value;
  }
  return { ...env, LANGGRAPH_CLI_NO_ANALYTICS: "1", NO_COLOR: "1", ...extra };
}

/** `langgraphjs <args>` in `cwd`, as a user would run it. */
export function langgraphjs(
  bin: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; onStdout?: (soFar: string) => void },
): Promise<CommandRun> {
  return runCommand(process.execPath, [bin, ...args], { env: cliEnv(), ...options });
}

/** A failed run's whole output, for assertion messages. */
export const shown = (result: CommandRun) => `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
