import type { FastifyInstance } from "fastify";
import { createRequire } from "node:module";
import { join } from "node:path";
import { applyProjectEnv, loadProjectConfig } from "./config/langgraph-config.js";
import { type ServerSettings, settingsFromEnv } from "./config/settings.js";
import { pinLangChainPackages } from "./graphs/pin-packages.js";
import { GraphRegistry } from "./graphs/registry.js";
import { buildApp } from "./http/app.js";
import { createLogger, type Logger } from "./logger.js";
import { InProcessBroker } from "./runs/in-process-broker.js";
import { RunControl } from "./runs/run-control.js";
import { RunWorker } from "./runs/worker.js";
import { createServices } from "./services/index.js";
import { createSqliteStorage } from "./storage/sqlite/index.js";
import type { Storage } from "./storage/types.js";

export interface ServerOptions {
  /** A project directory or its langgraph.json. */
  config: string;
  host: string;
  port: number;
  /** Where the SQLite database lives; default `.berth/` beside langgraph.json. */
  dataDir?: string;
  /** Overrides of the settings read from the environment. */
  settings?: Partial<ServerSettings>;
  logger?: Logger;
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  storage: Storage;
  /** Stops accepting work, lets executing runs finish within the grace period, and closes. */
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

function versions() {
  return {
    version: (require("../package.json") as { version: string }).version,
    langgraph_js_version: (require("@langchain/langgraph/package.json") as { version: string }).version,
  };
}

/** Loads the project's graphs and serves them over the Agent Server API. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const project = loadProjectConfig(options.config);
  for (const warning of project.warnings) logger.warn(warning);
  applyProjectEnv(project.env);
  pinLangChainPackages();
  const settings = { ...settingsFromEnv(), ...options.settings };

  const dataDir = options.dataDir ?? join(project.projectDir, ".berth");
  const storage = createSqliteStorage(dataDir, settings.sqliteSynchronous);
  try {
    const graphs = await GraphRegistry.load(project.graphs, storage.checkpointer);
    const broker = new InProcessBroker();
    const control = new RunControl();
    const worker = new RunWorker(
      { storage, graphs, live: broker, control, logger, maxAttempts: settings.maxAttempts, runTimeoutMs: settings.runTimeoutMs },
      { concurrency: settings.workers, leaseMs: settings.leaseMs, exclusiveDatabase: true },
    );
    broker.onWake((availableAt) => worker.wake(availableAt));
    broker.onCancel((runId, reason) => control.abort(runId, reason));
    const services = createServices(storage, graphs, broker);
    await services.assistants.ensureSystemAssistants();
    const app = await buildApp(services, {
      logger,
      bodyLimit: settings.bodyLimitBytes,
      info: versions(),
      timings: { heartbeatMs: settings.streamHeartbeatMs, keepAliveMs: settings.waitKeepAliveMs },
    });
    await worker.start();
    const pruning = setInterval(() => {
      const cutoff = new Date(Date.now() - settings.runLogRetentionMs).toISOString();
      storage.runs.pruneEvents(cutoff).catch((err) => logger.error({ err }, "pruning run event logs failed"));
    }, Math.min(settings.runLogRetentionMs, 60_000) || 60_000);
    pruning.unref();
    const address = await app.listen({ host: options.host, port: options.port });
    logger.info({ url: address, graphs: graphs.ids(), dataDir }, "agent server listening");
    logger.flush();
    return {
      url: address,
      app,
      storage,
      async close() {
        clearInterval(pruning);
        await worker.stop(settings.shutdownGraceMs);
        for (const runId of control.runningIds()) control.abort(runId, "shutdown");
        await app.close();
        await storage.close();
      },
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
