import { Lifecycle } from "@berth/service-kit";
import type { FastifyInstance } from "fastify";
import type { StoreSettings } from "./config/memory-store-config.js";
import type { OpenAiSettings } from "./config/settings.js";
import { GraphRegistry } from "./graphs/registry.js";
import { createLogger, type Logger } from "./logger.js";
import { ItemStore } from "./memory/item-store.js";
import { loadEmbedder } from "./memory/load-embedder.js";
import { openBackends } from "./runtime.js";
import { createExecution, flushTraces, startExecution, startMaintenance } from "./server-background.js";
import { HttpSide } from "./server-http.js";
import { prepareServer, type ServerOptions } from "./server-setup.js";
import { createServices } from "./services/index.js";
import type { Storage } from "./storage/types.js";
import type { Tracing } from "./tracing/tracing.js";

export type { ServerOptions, ServerRole } from "./server-setup.js";

export interface RunningServer {
  /** The HTTP address (undefined for a worker-only process). */
  url?: string;
  /** `http.mount_prefix`, under which the API answers at `url` (`/ok` answers at the root too). */
  mountPrefix?: string;
  app?: FastifyInstance;
  storage: Storage;
  /**
   * Resolves once every graph module is imported; rejects with the GraphLoadError of the first that fails. Settled
   * before startServer resolves, but for `dev`: there the graphs import right after the server listens (requests that
   * need one wait for it, and answer 503 with the load error if it fails), so the caller says whether the project loads.
   * `dev` starts its run worker then too (runs created before wait in the queue); a failure to start it rejects this.
   */
  graphsLoaded: Promise<void>;
  /** Stops taking work, lets executing runs and open responses finish within the grace period, and closes. */
  close(): Promise<void>;
}

/**
 * Loads the project's graphs and serves them over the Agent Server API and/or executes their runs. Every part it
 * starts is stopped by one Lifecycle, in reverse; the HTTP side is registered before the worker although it listens
 * last, so that at close it stops after the worker: open streams and waits see their runs end within the grace period.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const setup = await prepareServer(options, logger);
  const { role, settings, project } = setup;
  const backends = await openBackends(settings, setup.dataDir, logger);
  const { storage, broker, describe } = backends;
  const lifecycle = new Lifecycle();
  lifecycle.own(storage);
  lifecycle.own(broker);
  return lifecycle.run(async () => {
    // `berth dev` answers /ok before the graphs (and the LangChain modules they pull) are imported: see graphsLoaded.
    const graphs = options.dev
      ? GraphRegistry.deferred(project.graphs, () => storage.checkpointer(), logger)
      : await GraphRegistry.load(project.graphs, () => storage.checkpointer(), logger);
    const items = await openItemStore(project.store, settings.openai, storage, logger);
    // Runs are traced where they execute: an API-only process has nothing to trace.
    const tracing =
      role !== "api" && settings.tracing
        ? (await import("./tracing/tracing.js")).Tracing.create(settings.tracing, logger)
        : undefined;
    const http = new HttpSide(settings.shutdownGraceMs);
    lifecycle.defer(() => closeWhileFlushing(http, tracing, logger));
    const deps = { setup, backends, graphs, items, tracing, logger, apiUrl: () => http.ownUrl, faults: options.faults };
    const execution = role === "api" ? undefined : createExecution(deps);
    const services = createServices({
      storage,
      graphs,
      broker,
      items,
      threads: { defaultTtlMinutes: project.checkpointer.defaultTtlMinutes },
      webhooks: {
        policy: setup.webhooks.policy,
        allowPrivate: setup.webhookAllowPrivate,
        ownRoutes: setup.customApp !== undefined,
      },
      worker: execution?.worker,
    });
    if (role !== "worker") await services.assistants.ensureSystemAssistants(setup.assistantDefaults);
    const startWorker = async () => {
      if (execution) await startExecution(lifecycle, execution, services, deps);
    };
    // `berth dev` starts its worker after it listens, as it imports the graphs then: the executor loads LangGraph.
    if (!options.dev) await startWorker();
    startMaintenance(lifecycle, setup, backends, logger);
    const where = { host: options.host, port: options.port, logger };
    const details = { role, graphs: graphs.ids(), storage: describe };
    if (role === "worker") {
      await http.serveWorkerHealth(options.workerHealth ?? false, where, { ...details, owner: execution?.worker.owner });
    } else {
      // A project that does not load is said first, as when the graphs were imported before listening (a port in use too).
      await http.serveApi(setup, services, where, details).catch(async (error: unknown) => {
        await graphs.loadAll();
        throw error;
      });
    }
    const graphsLoaded = Promise.all([options.dev ? startWorker() : undefined, graphs.loadAll()]).then(
      () => {},
      (error: unknown) => {
        if (!lifecycle.closed) throw error; // closed while loading (its storage with it): nothing to report
      },
    );
    graphsLoaded.catch(() => {}); // the caller's to report (the CLI prints it once); requests needing the graph say it too
    logger.flush();
    const close = () => lifecycle.close();
    return { url: http.url, mountPrefix: project.http.mountPrefix, app: http.app, storage, graphsLoaded, close };
  });
}

/** The store graphs and the API share (the execution thread opens its own), with the embedder `store.index` names (loaded like the graphs, from the project). */
export async function openItemStore(
  settings: StoreSettings,
  openai: OpenAiSettings,
  storage: Storage,
  logger: Logger,
): Promise<ItemStore> {
  const embedder = settings.index ? await loadEmbedder(settings.index, openai) : undefined;
  if (settings.index?.embed.kind === "provider" && !openai.apiKey) {
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

/** Closes the HTTP side while the pending traces are sent (the tracing service may be slow or down). */
async function closeWhileFlushing(http: HttpSide, tracing: Tracing | undefined, logger: Logger): Promise<void> {
  const flushing = flushTraces(tracing, logger);
  await http.close();
  await flushing;
}
