import type { FastifyInstance } from "fastify";
import { createRequire } from "node:module";
import { join } from "node:path";
import { applyProjectEnv, loadProjectConfig } from "./config/langgraph-config.js";
import { pinLangChainPackages } from "./graphs/pin-packages.js";
import { GraphRegistry } from "./graphs/registry.js";
import { buildApp } from "./http/app.js";
import { createLogger, type Logger } from "./logger.js";
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
  /** Largest accepted request body in bytes. */
  bodyLimit?: number;
  logger?: Logger;
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  storage: Storage;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
const DEFAULT_BODY_LIMIT = 32 * 1024 * 1024;

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

  const dataDir = options.dataDir ?? join(project.projectDir, ".berth");
  const storage = createSqliteStorage(dataDir);
  try {
    const graphs = await GraphRegistry.load(project.graphs, storage.checkpointer);
    const services = createServices(storage, graphs);
    await services.assistants.ensureSystemAssistants();
    const app = await buildApp(services, {
      logger,
      bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
      info: versions(),
    });
    const address = await app.listen({ host: options.host, port: options.port });
    logger.info({ url: address, graphs: graphs.ids(), dataDir }, "agent server listening");
    return {
      url: address,
      app,
      storage,
      async close() {
        await app.close();
        await storage.close();
      },
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
