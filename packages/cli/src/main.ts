import { readFileSync } from "node:fs";
import { BACKUP_USAGE } from "./commands/backup-usage.js";
import {
  BASE_IMAGE_HELP,
  BASE_IMAGE_USAGE,
  CHECK_HELP,
  CHECK_USAGE,
  COMPILE_HELP,
  COMPILE_USAGE,
  CONTROL_PLANE_HELP,
  CONTROL_PLANE_USAGE,
  LISTENER_HELP,
  LISTENER_USAGE,
  REMOTE_USAGE,
} from "./usage.js";

const USAGE = `Usage: berth <command> [options]

Commands:
  dev [dir-or-langgraph.json]     Serve a LangGraph.js project (SQLite under --data-dir by default)
      --port <n>                  Port (default 2024; 0 picks a free one)
      --host <addr>               Address (default 127.0.0.1)
      --data-dir <dir>            SQLite directory (default .berth/ beside langgraph.json)
      --no-reload                 One process: no restart when the project's sources, langgraph.json or .env change
  serve [dir-or-langgraph.json]   Serve a project in production: the options of dev, and
      --role api|worker|all       What this process does (default BERTH_ROLE, else all; a worker given --port answers GET /ok there)
      --workers <n>               Runs executing at once in this process (default BERTH_WORKERS or 100)
${CHECK_USAGE}${COMPILE_USAGE}${CONTROL_PLANE_USAGE}${LISTENER_USAGE}${BASE_IMAGE_USAGE}${BACKUP_USAGE}${REMOTE_USAGE}  -v, --version                   The CLI's version
  -h, --help                      This help; \`berth <command> --help\` prints a command's own

DATABASE_URL (postgres://...) and REDIS_URL (redis://...) switch to the scale-out backends.
`;

/** Help answered here, before loading a command that loads a server package (check: the agent server). */
const EARLY_HELP = new Map([
  ["check", CHECK_HELP],
  ["compile", COMPILE_HELP],
  ["control-plane", CONTROL_PLANE_HELP],
  ["listener", LISTENER_HELP],
  ["base-image", BASE_IMAGE_HELP],
]);

/** The version in the CLI package's package.json (read here: src/ and dist/ both sit beside it). */
function version(): string {
  const packageJson = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  return packageJson.version;
}

/** Errors that end a command with their message alone (exit 2): what the user must change is in it. */
const STARTUP_REFUSALS = new Set(["EnvError", "ConfigFileError", "DatabaseTooNewError"]);

/**
 * Runs a berth command; resolves to the process exit code (a server keeps
 * running). Each command's module loads only when it runs: `berth dev` does
 * not load the control plane, and a build's `berth check` only the agent server.
 */
export async function main(argv: string[]): Promise<number> {
  try {
    return await run(argv);
  } catch (error) {
    // A setting the environment (service-kit's EnvError) or `berth login`'s file got wrong, or a database a newer
    // Berth wrote (DatabaseTooNewError), matched by name so this file loads nothing more.
    if (error instanceof Error && STARTUP_REFUSALS.has(error.name)) {
      process.stderr.write(`berth ${argv[0]}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const help = command === undefined ? undefined : EARLY_HELP.get(command);
  if (help !== undefined && (rest.includes("--help") || rest.includes("-h"))) {
    process.stdout.write(help);
    return 0;
  }
  switch (command) {
    case "dev":
    case "serve":
      return (await import("./commands/serve.js")).serveCommand(command, rest);
    case "check":
      return (await import("./commands/check.js")).checkCommand(rest);
    case "compile":
      return (await import("./commands/compile.js")).compileCommand(rest);
    case "control-plane":
      return (await import("./commands/control-plane.js")).controlPlaneCommand(rest);
    case "listener":
      return (await import("./commands/listener.js")).listenerCommand(rest);
    case "base-image":
      return (await import("./commands/base-image.js")).baseImageCommand(rest);
    case "deploy":
      return (await import("./commands/deploy.js")).deployCommand(rest);
    case "deployments":
      return (await import("./commands/deployments.js")).deploymentsCommand(rest);
    case "revisions":
      return (await import("./commands/revisions.js")).revisionsCommand(rest);
    case "logs":
      return (await import("./commands/logs.js")).logsCommand(rest);
    case "secrets":
      return (await import("./commands/secrets.js")).secretsCommand(rest);
    case "integrations":
      return (await import("./commands/integrations.js")).integrationsCommand(rest);
    case "login":
      return (await import("./commands/login.js")).loginCommand(rest);
    case "logout":
      return (await import("./commands/login.js")).logoutCommand(rest);
    case "backup":
      return (await import("./commands/backup.js")).backupCommand(rest);
    case "restore":
      return (await import("./commands/restore.js")).restoreCommand(rest);
    case "--version":
    case "-v":
      process.stdout.write(`${version()}\n`);
      return 0;
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`berth: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}
