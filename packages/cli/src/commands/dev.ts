import { ConfigError, GraphLoadError, startServer } from "@berth/agent-server";
import { parseArgs } from "node:util";

export async function devCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: "string", default: "2024" },
        host: { type: "string", default: "127.0.0.1" },
        "data-dir": { type: "string" },
      },
    });
  } catch (error) {
    process.stderr.write(`berth dev: ${(error as Error).message}\n`);
    return 2;
  }
  const port = Number(parsed.values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`berth dev: --port must be a port number, got "${parsed.values.port}"\n`);
    return 2;
  }
  try {
    const server = await startServer({
      config: parsed.positionals[0] ?? ".",
      host: parsed.values.host,
      port,
      dataDir: parsed.values["data-dir"],
    });
    const stop = async () => {
      await server.close();
      process.exit(0);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof GraphLoadError) {
      process.stderr.write(`berth dev: ${error.message}\n`);
      return 1;
    }
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      process.stderr.write(`berth dev: ${parsed.values.host}:${port} is already in use; choose another with --port\n`);
      return 1;
    }
    throw error;
  }
}
