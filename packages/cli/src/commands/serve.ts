import { parseArgs } from "node:util";
import { createServiceLogger } from "@berth/service-kit";
import { loadAgentServer } from "./load-agent-server.js";
import { closeOnSignals, parsedOrError, parsePort } from "../process.js";
import { serveFromEnv } from "../settings.js";
import { DEV_USAGE, SERVE_USAGE } from "./serve-usage.js";
import { followSupervisor, hasSupervisor, tellSupervisor, tellSupervisorFailed } from "./dev-child.js";
import { devBanner } from "./dev-banner.js";

const ROLES = ["api", "worker", "all"] as const;
const LOOPBACK = ["127.0.0.1", "::1", "localhost"];

interface ServeOptions {
  config: string;
  host: string;
  port: number;
  /** --port (or PORT) was given: a worker then answers health checks there. */
  portGiven: boolean;
  dataDir?: string;
  role: (typeof ROLES)[number];
  workers?: number;
  /** dev: restart the server when the project changes. */
  reload: boolean;
  /** dev: logs as JSON lines, or formatted to read (default: formatted on a terminal, JSON otherwise). */
  logFormat: "json" | "pretty";
}

/**
 * `berth dev` and `berth serve`: serve a project. `serve` also takes a role
 * (api, worker or all) and a worker count, for scale-out on PostgreSQL + Redis.
 * `dev` (unless `--no-reload`) supervises a server process and restarts it when
 * the project changes (dev-supervisor.ts).
 */
export async function serveCommand(command: "dev" | "serve", argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(command === "dev" ? DEV_USAGE : SERVE_USAGE);
    return 0;
  }
  const options = parseOptions(command, argv);
  if (typeof options === "number") return options;
  if (command === "dev" && options.reload) {
    return (await import("./dev-supervisor.js")).superviseDev(options);
  }
  return serveInProcess(command, options);
}

/** The command's options, or the exit code of a usage error (printed). */
function parseOptions(command: "dev" | "serve", argv: string[]): ServeOptions | number {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: "string" },
        host: { type: "string", default: "127.0.0.1" },
        "data-dir": { type: "string" },
        ...(command === "serve"
          ? { role: { type: "string" }, workers: { type: "string" } }
          : { "no-reload": { type: "boolean" }, "json-logs": { type: "boolean" }, "pretty-logs": { type: "boolean" } }),
      },
    }),
  );
  if (parsed instanceof Error) return usageError(command, parsed.message);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const text = (name: string) => values[name] as string | undefined;
  // `serve` also takes PORT, as container platforms set it (a Berth image's Deployment sets it per pod).
  const fromEnv = serveFromEnv();
  const portText = text("port") ?? (command === "serve" ? fromEnv.port : undefined);
  const port = parsePort(portText ?? "2024");
  if (port === undefined) {
    return usageError(command, `${text("port") === undefined ? "PORT" : "--port"} must be a port number, got "${portText}"`);
  }
  const host = text("host")!;
  if (command === "dev" && !LOOPBACK.includes(host)) {
    return usageError(
      command,
      `dev serves without authentication, on loopback only (${LOOPBACK.join(", ")}); use berth serve with BERTH_API_KEY to listen on ${host}`,
    );
  }
  // BERTH_ROLE lets one image run as api or worker containers without another command.
  const askedRole = text("role") ?? (command === "serve" ? fromEnv.role : undefined) ?? "all";
  const role = askedRole as (typeof ROLES)[number];
  if (!ROLES.includes(role)) return usageError(command, `--role must be one of ${ROLES.join(", ")}, got "${askedRole}"`);
  const workers = text("workers") === undefined ? undefined : Number(text("workers"));
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1)) {
    return usageError(command, `--workers must be a positive integer, got "${text("workers")}"`);
  }
  if (values["json-logs"] === true && values["pretty-logs"] === true) {
    return usageError(command, "--json-logs and --pretty-logs: one or the other");
  }
  const pretty = values["pretty-logs"] === true || (values["json-logs"] !== true && process.stdout.isTTY === true);
  return {
    config: parsed.positionals[0] ?? ".",
    host,
    port,
    portGiven: portText !== undefined,
    dataDir: text("data-dir"),
    role,
    workers,
    reload: values["no-reload"] !== true,
    logFormat: command === "dev" && pretty ? "pretty" : "json",
  };
}

async function serveInProcess(command: "dev" | "serve", options: ServeOptions): Promise<number> {
  const { config, host, port, role, workers } = options;
  if (command === "dev") followSupervisor();
  const { ConfigError, GraphLoadError, startServer } = await loadAgentServer(config, { compiled: command === "serve" });
  try {
    const server = await startServer({
      config,
      host,
      port,
      role,
      // A worker given a port answers health checks there (containers, probes); without one it listens nowhere.
      workerHealth: role === "worker" && options.portGiven,
      dataDir: options.dataDir,
      dev: command === "dev",
      settings: workers === undefined ? undefined : { workers },
      logger: options.logFormat === "pretty" ? createServiceLogger("agent-server", { pretty: true }) : undefined,
    });
    // The runs' grace (BERTH_SHUTDOWN_GRACE_SECONDS) and 20 s more: a shutdown stuck beyond that ends the process anyway.
    closeOnSignals(server, serveFromEnv().shutdownGraceMs + 20_000);
    // `berth dev` listens before importing the graphs; a project whose graphs do not load still fails its start.
    await server.graphsLoaded.catch(async (error: unknown) => {
      await server.close();
      throw error;
    });
    if (command === "dev" && server.url) {
      // Where the API answers, with langgraph.json's http.mount_prefix: what the banner and the supervisor show.
      const apiUrl = `${server.url}${server.mountPrefix ?? ""}`;
      tellSupervisor(apiUrl);
      if (!hasSupervisor()) process.stderr.write(devBanner(apiUrl));
    }
    return 0;
  } catch (error) {
    const projectFailure = error instanceof ConfigError || error instanceof GraphLoadError;
    const reason = projectFailure
      ? error.message
      : (error as NodeJS.ErrnoException).code === "EADDRINUSE"
        ? `${host}:${port} is already in use; choose another with --port`
        : undefined;
    if (reason === undefined) throw error;
    process.stderr.write(`berth ${command}: ${reason}\n`);
    // The project's own failure, under `berth dev`'s supervisor: it answers requests with it until a change fixes it.
    // A port in use is not the project's: the supervisor exits on it at the first start.
    if (command === "dev" && projectFailure) await tellSupervisorFailed(reason);
    return 1;
  }
}

function usageError(command: string, message: string): number {
  process.stderr.write(`berth ${command}: ${message}\n`);
  return 2;
}
