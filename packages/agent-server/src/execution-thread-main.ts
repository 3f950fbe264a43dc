// The execution thread (runs/execution/execution-thread.ts): the process's run worker on its own SQLite connection
// to the same file (WAL), its broker bridged to the main thread's over the thread's port.
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { SqliteWriteLock } from "@berth/service-kit";
import { loadProjectConfig } from "./config/langgraph-config.js";
import { environment } from "./config/settings.js";
import { GraphRegistry } from "./graphs/registry.js";
import { pinLangChainPackages, projectModuleDirs } from "./graphs/pin-packages.js";
import { poolRandomValues } from "./graphs/pooled-random-values.js";
import { exposeToOwnClients } from "./http/own-client.js";
import { createLogger } from "./logger.js";
import { ExecutionSideBroker, type FromExecution } from "./runs/brokers/thread-port-broker.js";
import type { ExecutionThreadData, FromThread, ToThread } from "./runs/execution/execution-thread.js";
import { TestFaults } from "./runs/execution/test-faults.js";
import type { RunWorker } from "./runs/execution/worker.js";
import { openItemStore } from "./server.js";
import { flushTraces } from "./server-background.js";
import { newRunWorker } from "./server-worker.js";
import { createSqliteStorage } from "./storage/sqlite/index.js";
import { Tracing } from "./tracing/tracing.js";

if (!parentPort) throw new Error("execution-thread-main runs as a worker thread");
const port: MessagePort = parentPort;
const data = workerData as ExecutionThreadData;
const post = (message: FromThread) => port.postMessage(message);

const logger = createLogger();
const { settings } = data;
const project = loadProjectConfig(data.configFile, environment());
pinLangChainPackages(projectModuleDirs(project));
poolRandomValues();
const storage = createSqliteStorage(data.dataDir, settings.sqliteSynchronous, {
  checkpointsElsewhere: true,
  writeLock: data.writeLock && new SqliteWriteLock(data.writeLock),
});
let worker: RunWorker | undefined;
/** The worker's slots changed since they were last sent: the next batch carries them and its counters. */
let statsDue = false;
/** Runs the main thread's creations claimed for this worker and handed over (reserveSlot there). */
let adopted = 0;
const stats = () => {
  if (!statsDue || !worker) return {};
  statsDue = false;
  return { slots: worker.slots(), runs: worker.runStats(), adopted };
};
const broker = new ExecutionSideBroker((messages) => {
  const extra = stats();
  try {
    post({ k: "broker", m: messages, ...extra });
  } catch (err) {
    // An output the structured clone refuses (outputs are wire values already: this should not happen): as JSON.
    logger.error({ err }, "a run's end notice could not cross to the main thread: sending its output as JSON");
    post({ k: "broker", m: messages.map(asJson), ...extra });
  }
});
let apiUrl: string | undefined;

function asJson(message: FromExecution): FromExecution {
  if (message.t !== "end") return message;
  return { ...message, n: { status: message.n.status, output: JSON.parse(JSON.stringify(message.n.output ?? null)) } };
}
const graphs = await GraphRegistry.load(project.graphs, () => storage.checkpointer(), logger);
const items = await openItemStore(project.store, settings.openai, storage, logger);
const tracing = settings.tracing ? Tracing.create(settings.tracing, logger) : undefined;
worker = newRunWorker({
  settings,
  storage,
  broker,
  graphs,
  items,
  tracing,
  logger,
  apiUrl: () => apiUrl,
  // Alone, this thread owns the file's runs: a new thread requeues what a crashed one left running. Beside the main
  // thread's worker, it requeues only the crashed thread's runs.
  exclusive: !data.beside,
  requeueOwners: data.requeueOwners,
  readsRunsFromDatabase: false,
  faults: data.faults ? new TestFaults(data.faults) : undefined,
  webhooksQueued: data.webhooks ? () => post({ k: "webhooks" }) : undefined,
  slotsChanged: () => {
    if (statsDue) return;
    statsDue = true;
    // Sent with the batch of this turn when there is one (a run's end), else alone.
    setImmediate(() => {
      if (statsDue) post({ k: "broker", m: [], ...stats() });
    });
  },
});

let stopping = false;
port.on("message", (message: ToThread) => {
  if (message.k === "broker") {
    if ("url" in message) {
      apiUrl = message.url;
      // As on the main thread: an SDK Client a graph makes without a URL reaches this server.
      if (apiUrl) exposeToOwnClients(apiUrl, settings.apiKey);
    }
    broker.receive(message.m);
  } else if (message.k === "run") {
    adopted++;
    worker?.adopt(message.run);
  } else if (!stopping) {
    stopping = true;
    void stop(message.graceMs);
  }
});

async function stop(graceMs: number): Promise<void> {
  try {
    await worker?.stop(graceMs);
    broker.flush();
    await flushTraces(tracing, logger);
    await broker.close();
    await storage.close();
  } catch (err) {
    logger.error({ err }, "stopping the execution thread failed");
  } finally {
    logger.flush();
    post({ k: "stopped" });
    port.close();
  }
}

await worker.start();
post({ k: "ready", owner: worker.owner, slots: worker.slots() });
