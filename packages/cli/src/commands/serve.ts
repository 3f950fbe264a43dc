import { parseArgs } from "node:util";
import { loadAgentServer } from "./load-agent-server.js";
import { closeOnSignals, parsedOrError, parsePort } from "../process.js";

const ROLES = ["api", "worker", "all"] as const;
const LOOPBACK = ["127.0.0.1", "::1", "localhost"];

/**
 * `berth dev` and `berth serve`: serve a project. `serve` also takes a role
 * (api, worker or all) and a worker count, for scale-out on PostgreSQL + Redis.
 */
export async function serveCommand(command: "dev" | "serve", argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: "string" },
        host: { type: "string", default: "127.0.0.1" },
        "data-dir": { type: "string" },
        ...(command === "serve" ? { role: { type: "string" }, workers: { type: "string" } } : {}),
      },
    }),
  );
  if (parsed instanceof Error) return usageError(command, parsed.message);
  const values = parsed.values as Record<string, string | undefined>;
  // `serve` also takes PORT, as container platforms set it (a Berth image's Deployment sets it per pod).
  const portText = values.port ?? (command === "serve" ? process.env.PORT || undefined : undefined);
  const port = parsePort(portText ?? "2024");
  if (port === undefined) {
    return usageError(command, `${values.port === undefined ? "PORT" : "--port"} must be a port number, got "${portText}"`);
  }
  if (command === "dev" && !LOOPBACK.includes(values.host!)) {
    return usageError(
      command,
      `dev serves without authentication, on loopback only (${LOOPBACK.join(", ")}); use berth serve with BERTH_API_KEY to listen on ${values.host}`,
    );
  }
  // BERTH_ROLE lets one image run as api or worker containers without another command.
  const askedRole = values.role ?? (command === "serve" ? process.env.BERTH_ROLE || undefined : undefined) ?? "all";
  const role = askedRole as (typeof ROLES)[number];
  if (!ROLES.includes(role)) return usageError(command, `--role must be one of ${ROLES.join(", ")}, got "${askedRole}"`);
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1)) {
    return usageError(command, `--workers must be a positive integer, got "${values.workers}"`);
  }
  const config = parsed.positionals[0] ?? ".";
  const { ConfigError, GraphLoadError, startServer } = await loadAgentServer(config);
  try {
    const server = await startServer({
      config,
      host: values.host!,
      port,
      role,
      // A worker given a port answers health checks there (containers, probes); without one it listens nowhere.
      workerHealth: role === "worker" && portText !== undefined,
      dataDir: values["data-dir"],
      dev: command === "dev",
      settings: workers === undefined ? undefined : { workers },
    });
    // The runs' grace (BERTH_SHUTDOWN_GRACE_SECONDS) and 20 s more: a shutdown stuck beyond that ends the process anyway.
    closeOnSignals(server, (Number(process.env.BERTH_SHUTDOWN_GRACE_SECONDS ?? 10) || 0) * 1000 + 20_000);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof GraphLoadError) {
      process.stderr.write(`berth ${command}: ${error.message}\n`);
      return 1;
    }
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      process.stderr.write(`berth ${command}: ${values.host}:${port} is already in use; choose another with --port\n`);
      return 1;
    }
    throw error;
  }
}

function usageError(command: string, message: string): number {
  process.stderr.write(`berth ${command}: ${message}\n`);
  return 2;
}
