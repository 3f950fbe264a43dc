import type { FastifyInstance } from "fastify";
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { systemAssistantDefaults } from "./config/assistant-defaults.js";
import { applyProjectEnv, ConfigError, loadProjectConfig } from "./config/langgraph-config.js";
import { type ServerSettings, settingsFromEnv } from "./config/settings.js";
import { webhookSettings } from "./config/webhook-config.js";
import type { StoreSettings } from "./config/memory-store-config.js";
import type { CustomAppSpec } from "./config/http-config.js";
import { type CustomApp, CustomAppLoadError, loadCustomApp } from "./graphs/custom-app-module.js";
import { pinLangChainPackages, projectModuleDirs } from "./graphs/pin-packages.js";
import { GraphRegistry } from "./graphs/registry.js";
import { setSchemaCacheDir } from "./graphs/schemas.js";
import { bundleUi } from "./graphs/ui-bundle.js";
import { buildApp } from "./http/app.js";
import { loadAuthentication } from "./http/auth/setup.js";
import { type CustomAppServer, customAppWebhooks, serveCustomApp } from "./http/custom-app.js";
import { customAppGates } from "./http/custom-app-auth.js";
import { serveHealthOnly } from "./http/health-only.js";
import { exposeToOwnClients, ownAddress } from "./http/own-client.js";
import { createLogger, type Logger } from "./logger.js";
import { RunControl } from "./runs/execution/run-control.js";
import { RunWorker } from "./runs/execution/worker.js";
import { WebhookDeliverer } from "./runs/webhooks/deliverer.js";
import { openBackends } from "./runtime.js";
import { startCronScheduler } from "./services/cron-scheduler.js";
import { createServices } from "./services/index.js";
import type { Storage } from "./storage/types.js";
import { GraphStore } from "./memory/graph-store.js";
import { ItemStore } from "./memory/item-store.js";
import { loadEmbedder } from "./memory/load-embedder.js";
import { startBatchSweeper, startStoreSweeper } from "./memory/sweeper.js";
import { Tracing } from "./tracing/tracing.js";

/** api: serves HTTP; worker: executes runs; all: both (the embedded default). */
export type ServerRole = "api" | "worker" | "all";

export interface ServerOptions {
  /** A project directory or its langgraph.json. */
  config: string;
  host: string;
  port: number;
  role?: ServerRole;
  /** A worker answers `GET /ok` on host:port (and nothing else), for a supervisor's health checks. */
  workerHealth?: boolean;
  /** Where the SQLite database lives; default `.berth/` beside langgraph.json. */
  dataDir?: string;
  /** Overrides of the settings read from the environment. */
  settings?: Partial<ServerSettings>;
  logger?: Logger;
  /** `berth dev`: webhooks may target private and loopback addresses unless BERTH_WEBHOOK_ALLOW_PRIVATE says otherwise. */
  dev?: boolean;
}

export interface RunningServer {
  /** The HTTP address (undefined for a worker-only process). */
  url?: string;
  app?: FastifyInstance;
  storage: Storage;
  /** Stops taking work, lets executing runs and open responses finish within the grace period, and closes. */
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** A stopping process sends the traces still pending for at most this long (the tracing service may be down). */
const TRACE_FLUSH_TIMEOUT_MS = 5_000;

function versions() {
  return {
    version: (require("../package.json") as { version: string }).version,
    langgraph_js_version: (require("@langchain/langgraph/package.json") as { version: string }).version,
  };
}

/** Loads the project's graphs and serves them over the Agent Server API and/or executes their runs. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const role = options.role ?? "all";
  const project = loadProjectConfig(options.config);
  for (const warning of project.warnings) logger.warn(warning);
  applyProjectEnv(project.env);
  // After the project's env, which may set BERTH_AUTH_* (and the module may read its variables).
  const authentication = await loadAuthentication(project.auth, process.env, logger);
  const assistantDefaults = systemAssistantDefaults(process.env.LANGGRAPH_CONFIG);
  pinLangChainPackages(projectModuleDirs(project));
  // Before any backend opens: a broken http.app stops the start like a broken graph does. Workers load it too: they
  // deliver the webhooks that name one of its paths.
  const customApp = project.http.app ? await loadProjectApp(project.http.app) : undefined;
  const settings = { ...settingsFromEnv(), ...options.settings };
  // After the project's env: header templates may read variables it sets.
  const webhooks = webhookSettings(project.webhooks, process.env);
  const webhookAllowPrivate = settings.webhookAllowPrivate ?? options.dev ?? false;
  if (role !== "all" && !settings.databaseUrl) {
    throw new ConfigError(`--role ${role} needs a shared database: set DATABASE_URL (and REDIS_URL)`);
  }

  const dataDir = options.dataDir ?? join(project.projectDir, ".berth");
  setSchemaCacheDir(join(dataDir, "schema-cache"));
  // Before any backend opens: a component file that does not bundle stops the start, naming the file.
  const ui =
    role !== "worker" && project.ui.entries.length > 0 ? await bundleUi(project.ui, join(dataDir, "ui-cache")) : undefined;
  const { storage, broker, exclusive, workerPollMs, readsRunsFromDatabase, describe } = await openBackends(
    settings,
    dataDir,
    logger,
  );
  try {
    const graphs = await GraphRegistry.load(project.graphs, storage.checkpointer, logger);
    const items = await openItemStore(project.store, storage, logger);
    const control = new RunControl();
    // Runs are traced where they execute: an API-only process has nothing to trace.
    const tracing = role !== "api" && settings.tracing ? Tracing.create(settings.tracing, logger) : undefined;
    broker.onCancel((runId, action) => control.abort(runId, action));
    // Every process that executes runs also delivers webhooks, whichever process's runs wrote them; `http.disable_webhooks`: none is.
    const deliverer =
      role === "api" || project.http.disabled.has("webhooks")
        ? undefined
        : new WebhookDeliverer(
            storage.webhooks,
            {
              owner: `webhooks-${randomUUID()}`,
              secret: settings.webhookSecret,
              timeoutMs: settings.webhookTimeoutMs,
              allowPrivate: webhookAllowPrivate,
              headers: webhooks.headers,
              ownRoutes: customApp && customAppWebhooks(customApp),
            },
            logger,
          );
    /** This server's address for code running in it, known once it listens. */
    let ownUrl: string | undefined;
    const worker =
      role === "api"
        ? undefined
        : new RunWorker(
            {
              storage,
              graphs,
              broker,
              control,
              logger,
              maxAttempts: settings.maxAttempts,
              runTimeoutMs: settings.runTimeoutMs,
              // Other processes read runs from the database: keep stateless runs there for a minute.
              statelessKeepMs: readsRunsFromDatabase ? 60_000 : undefined,
              tracing,
              store: new GraphStore(items),
              webhooks: deliverer && { retryMs: settings.webhookRetryMs, queued: () => deliverer.wake() },
              apiUrl: () => ownUrl,
            },
            { concurrency: settings.workers, leaseMs: settings.leaseMs, exclusiveDatabase: exclusive, pollMs: workerPollMs },
          );
    if (worker) broker.onWake((availableAt) => worker.wake(availableAt));
    const services = createServices(
      storage,
      graphs,
      broker,
      items,
      { defaultTtlMinutes: project.checkpointer.defaultTtlMinutes },
      { policy: webhooks.policy, allowPrivate: webhookAllowPrivate, ownRoutes: customApp !== undefined },
      worker,
    );
    if (role !== "worker") await services.assistants.ensureSystemAssistants(assistantDefaults);
    await worker?.start();
    deliverer?.start();
    // Every process that executes runs fires due crons; the database lets one of them claim each tick.
    const crons = role === "api" ? undefined : startCronScheduler(storage, services.runs, logger, settings.cronPollMs);
    if (crons) services.crons.scheduleChanged = () => crons.wake();
    const pruning = setInterval(() => {
      const cutoff = new Date(Date.now() - settings.runLogRetentionMs).toISOString();
      storage.runs.pruneEvents(cutoff).catch((err) => logger.error({ err }, "pruning run event logs failed"));
    }, Math.min(settings.runLogRetentionMs, 60_000) || 60_000);
    pruning.unref();
    const sweeper = startStoreSweeper(
      storage.store,
      settings.storeSweepMs ?? project.store.sweepIntervalMinutes * 60_000,
      logger,
    );
    // Every process sweeps expired threads (search and count hide them already); PostgreSQL's SKIP LOCKED splits the work.
    const threadSweeper = startBatchSweeper(
      (limit) => storage.threads.sweepExpired(limit),
      project.checkpointer.sweepIntervalMinutes * 60_000,
      logger,
      "expired threads",
    );

    let app: FastifyInstance | undefined;
    let url: string | undefined;
    let closeHealth: (() => Promise<void>) | undefined;
    let front: CustomAppServer | undefined;
    let hideFromOwnClients: (() => void) | undefined;
    if (role !== "worker") {
      app = await buildApp(services, {
        logger,
        bodyLimit: settings.bodyLimitBytes,
        info: { ...versions(), tracing: settings.tracing !== undefined },
        timings: { heartbeatMs: settings.streamHeartbeatMs, keepAliveMs: settings.waitKeepAliveMs },
        apiKey: settings.apiKey,
        internalTruncate: settings.internalTruncate,
        authentication,
        openapiSecurity: project.auth.openapi,
        http: project.http,
        ui,
      });
      if (customApp) {
        // The project's app takes the public address; the API listens where only it reaches (custom-app.ts says why).
        await app.listen({ host: "127.0.0.1", port: 0 });
        const apiPort = (app.server.address() as AddressInfo).port;
        const gates = customAppGates({ apiKey: settings.apiKey, authentication, http: project.http, logger });
        front = await serveCustomApp(options.host, options.port, { app: customApp, apiPort, gates, logger });
        url = front.url;
        logger.info({ app: project.http.app?.spec }, "http.app serves in front of the API");
      } else {
        url = await app.listen({ host: options.host, port: options.port });
      }
      ownUrl = ownAddress(url, project.http.mountPrefix);
      hideFromOwnClients = exposeToOwnClients(ownUrl, settings.apiKey);
      logger.info({ url, role, graphs: graphs.ids(), storage: describe }, "agent server listening");
      if (settings.internalTruncate)
        logger.warn("POST /internal/truncate is enabled (BERTH_INTERNAL_TRUNCATE): any client can empty the database");
    } else {
      const health = options.workerHealth ? await serveHealthOnly(options.host, options.port) : undefined;
      closeHealth = health?.close;
      url = health?.url;
      logger.info({ role, graphs: graphs.ids(), storage: describe, owner: worker?.owner, health: url }, "worker ready");
    }
    logger.flush();

    return {
      url,
      app,
      storage,
      async close() {
        clearInterval(pruning);
        // First: no new run may be created while the worker stops.
        await crons?.stop();
        await sweeper.stop();
        await threadSweeper.stop();
        if (worker) {
          await worker.stop(settings.shutdownGraceMs);
          // Runs still executing after the grace period go back to the queue for another worker.
          for (const runId of control.runningIds()) control.abort(runId, "shutdown");
          const released = await storage.runs.release(worker.owner);
          if (released > 0) logger.warn({ released }, "released unfinished runs");
        }
        await deliverer?.stop();
        const flushing = tracing?.flush(TRACE_FLUSH_TIMEOUT_MS).then((sent) => {
          if (!sent) logger.warn({ waited_ms: TRACE_FLUSH_TIMEOUT_MS }, "pending traces not sent before shutdown: they are lost");
        });
        await Promise.all([front?.close(settings.shutdownGraceMs), app && closeWithin(app, settings.shutdownGraceMs)]);
        await closeHealth?.();
        hideFromOwnClients?.();
        await flushing;
        await broker.close();
        await storage.close();
      },
    };
  } catch (error) {
    await broker.close();
    await storage.close();
    throw error;
  }
}

/** `http.app`'s module, its failures told as configuration errors (naming the file and the export). */
async function loadProjectApp(spec: CustomAppSpec): Promise<CustomApp> {
  try {
    return await loadCustomApp(spec);
  } catch (error) {
    if (error instanceof CustomAppLoadError) throw new ConfigError(error.message);
    throw error;
  }
}

/** The store graphs and the API share, with the embedder `store.index` names (loaded like the graphs, from the project). */
async function openItemStore(settings: StoreSettings, storage: Storage, logger: Logger): Promise<ItemStore> {
  const embedder = settings.index ? await loadEmbedder(settings.index) : undefined;
  if (settings.index?.embed.kind === "provider" && !process.env.OPENAI_API_KEY) {
    logger.warn(
      { embed: settings.index.embed.spec },
      "store.index.embed uses OpenAI but OPENAI_API_KEY is not set: puts and searches will fail",
    );
  }
  return new ItemStore(storage.store, {
    embedder,
    fields: settings.index?.fields ?? [],
    defaultTtlMinutes: settings.defaultTtlMinutes,
    refreshOnRead: settings.refreshOnRead,
  });
}

/** Lets open responses (streams, waits) finish for up to `graceMs`, then cuts them. */
async function closeWithin(app: FastifyInstance, graceMs: number): Promise<void> {
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
  timer.unref();
  await app.close();
  clearTimeout(timer);
}
