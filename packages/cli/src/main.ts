import { devCommand } from "./commands/dev.js";

const USAGE = `Usage: berth <command> [options]

Commands:
  dev [dir-or-langgraph.json]   Serve a LangGraph.js project (embedded SQLite)
      --port <n>                Port (default 2024)
      --host <addr>             Address (default 127.0.0.1)
      --data-dir <dir>          Database directory (default .berth/ beside langgraph.json)
`;

/** Runs a berth command; resolves to the process exit code (a server keeps running). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "dev":
      return devCommand(rest);
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
