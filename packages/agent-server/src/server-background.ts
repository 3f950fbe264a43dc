import type { Lifecycle } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import type { GraphRegistry } from "./graphs/registry.js";
import { customAppWebhooks } from "./http/custom-app.js";
import type { Logger } from "./logger.js";
import type { ItemStore } from "./memory/item-store.js";
import { startBatchSweeper, startStoreSweeper } from "./memory/sweeper.js";
import { MainSideBroker } from "./runs/brokers/thread-port-broker.js";
import { DeferredWorker } from "./runs/execution/deferred-worker.js";
import { ExecutionThread, type ExecutionThreadData } from "./runs/execution/execution-thread.js";
import { SharedExecution } from "./runs/execution/shared-execution.js";
import type { TestFaults } from "./runs/execution/test-faults.js";
import type { RunWorker } from "./runs/execution/worker.js";
import { WebhookDeliverer } from "./runs/webhooks/deliverer.js";
import type { Backends } from "./runtime.js";
import type { ServerSetup } from "./server-setup.js";
import { startCronScheduler } from "./services/cron-scheduler.js";
import type { Services } from "./services/index.js";
import type { Tracing } from "./tracing/tracing.js";

const TYPESCRIPT_MODULE = /\.[cm]?tsx?$/;

/** A stopping process sends the traces still pending for at most this long (the tracing service may be down). */
const TRACE_FLUSH_TIMEOUT_MS = 5_000;

/** The worker of a process: in its main thread, or its execution thread's handle. */
export type ProcessWorker = Pick<RunWorker, "owner" | "start" | "stop" | "slots" | "runStats" | "reserveSlot">;

/** What executes runs in a process: its worker, and the deliverer of the webhooks runs write (unless `http.disable_webhooks`). */
export interface Execution {
  worker: ProcessWorker;
  deliverer?: WebhookDeliverer;
}

export interface ExecutionDeps {
  setup: ServerSetup;
  backends: Backends;
  graphs: GraphRegistry;
  items: ItemStore;
  tracing?: Tracing;
  logger: Logger;
  /** The address runs name as their server's, once it is known. */
  apiUrl: () => string | undefined;
  /** Test-only faults for the worker (test-faults.ts). */
  faults?: TestFaults;
}

/** The worker (here, or in the execution thread) and the webhook deliverer, not started. */
export function createExecution({ setup, backends, graphs, items, tracing, logger, apiUrl, faults }: ExecutionDeps): Execution {
  const { settings, project, customApp } = setup;
  const { storage, broker } = backends;
  // Delivers whichever process's runs wrote them.
  const deliverer = project.http.disabled.has("webhooks")
    ? undefined
    : new WebhookDeliverer(
        storage.webhooks,
        {
          owner: `webhooks-${randomUUID()}`,
          secret: settings.webhookSecret,
          timeoutMs: settings.webhookTimeoutMs,
          allowPrivate: setup.webhookAllowPrivate,
          headers: setup.webhooks.headers,
          ownRoutes: customApp && customAppWebhooks(customApp),
        },
        logger,
      );
  const webhooksQueued = deliverer && (() => deliverer.wake());
  let thread: ExecutionThread | undefined;
  if (broker instanceof MainSideBroker) {
    const data: ExecutionThreadData = {
      configFile: project.configFile,
      dataDir: setup.dataDir,
      settings,
      faults: faults?.spec,
      webhooks: deliverer !== undefined,
      writeLock: backends.sqliteWriteLock?.buffer,
      beside: backends.placement === "beside",
    };
    const typescript = project.graphs.some((graph) => TYPESCRIPT_MODULE.test(graph.file)) || project.store.index !== undefined;
    thread = new ExecutionThread({
      entry: executionThreadEntry(),
      data,
      broker,
      logger,
      apiUrl,
      webhooksQueued,
      typescript,
    });
    if (backends.placement === "thread") return { worker: thread, deliverer };
  }
  const parts = {
    settings,
    storage,
    broker,
    graphs,
    items,
    tracing,
    logger,
    apiUrl,
    exclusive: backends.exclusive,
    readsRunsFromDatabase: backends.readsRunsFromDatabase,
    pollMs: backends.workerPollMs,
    faults,
    webhooksQueued,
  };
  const worker = new DeferredWorker(async () => (await import("./server-worker.js")).newRunWorker(parts), settings.workers);
  return { worker: thread ? new SharedExecution(worker, thread, logger) : worker, deliverer };
}

/** The execution thread's module, beside this one (TypeScript under the tests, JavaScript once built). */
function executionThreadEntry(): URL {
  return new URL(`./execution-thread-main${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url);
}

/**
 * Starts the worker, the webhook deliverer and the cron scheduler (every process that executes runs fires due crons;
 * the database lets one of them claim each tick). At close the crons stop first, so no run is created while the worker
 * stops; the worker lets executing runs finish within the grace period and hands the rest back to the queue.
 */
export async function startExecution(
  lifecycle: Lifecycle,
  { worker, deliverer }: Execution,
  services: Services,
  { setup, backends, logger }: ExecutionDeps,
): Promise<void> {
  if (deliverer) lifecycle.defer(() => deliverer.stop());
  // Before it starts: `berth dev` starts its worker after listening, and may be closed meanwhile.
  lifecycle.defer(() => worker.stop(setup.settings.shutdownGraceMs));
  await worker.start();
  if (lifecycle.closed) return;
  deliverer?.start();
  const crons = startCronScheduler({ storage: backends.storage, runs: services.runs, logger, pollMs: setup.settings.cronPollMs });
  services.crons.scheduleChanged = () => crons.wake();
  lifecycle.defer(() => crons.stop());
}

/** The clean-ups every process runs: expired threads and store items swept, ended runs' event logs pruned. */
export function startMaintenance(
  lifecycle: Lifecycle,
  { settings, project }: ServerSetup,
  backends: Backends,
  logger: Logger,
): void {
  const { storage } = backends;
  // Search and count hide expired threads already; PostgreSQL's SKIP LOCKED splits the work between processes.
  const threadSweeper = startBatchSweeper({
    sweepBatch: (limit) => storage.threads.sweepExpired(limit),
    intervalMs: project.checkpointer.sweepIntervalMinutes * 60_000,
    logger,
    what: "expired threads",
  });
  lifecycle.defer(() => threadSweeper.stop());
  const storeSweepMs = settings.storeSweepMs ?? project.store.sweepIntervalMinutes * 60_000;
  const storeSweeper = startStoreSweeper(storage.store, storeSweepMs, logger);
  lifecycle.defer(() => storeSweeper.stop());
  const pruning = setInterval(() => {
    const cutoff = new Date(Date.now() - settings.runLogRetentionMs).toISOString();
    storage.runs.pruneEvents(cutoff).catch((err) => logger.error({ err }, "pruning run event logs failed"));
  }, Math.min(settings.runLogRetentionMs, 60_000) || 60_000);
  pruning.unref();
  lifecycle.defer(() => clearInterval(pruning));
}

/** Sends the traces still pending, waiting at most TRACE_FLUSH_TIMEOUT_MS. */
export async function flushTraces(tracing: Tracing | undefined, logger: Logger): Promise<void> {
  const sent = await tracing?.flush(TRACE_FLUSH_TIMEOUT_MS);
  if (sent === false)
    logger.warn({ waited_ms: TRACE_FLUSH_TIMEOUT_MS }, "pending traces not sent before shutdown: they are lost");
}
