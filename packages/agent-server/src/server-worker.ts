import type { ServerSettings } from "./config/settings.js";
import type { GraphRegistry } from "./graphs/registry.js";
import type { Logger } from "./logger.js";
import { GraphStore } from "./memory/graph-store.js";
import type { ItemStore } from "./memory/item-store.js";
import type { RunBroker } from "./runs/brokers/broker.js";
import { RunControl } from "./runs/execution/run-control.js";
import type { TestFaults } from "./runs/execution/test-faults.js";
import { RunWorker } from "./runs/execution/worker.js";
import { EVENT_LOG_INTERVAL_MS } from "./runs/streaming/event-writer.js";
import type { Storage } from "./storage/types.js";
import type { Tracing } from "./tracing/tracing.js";

/** What a run worker is built from, in the main thread or in the execution thread. */
export interface WorkerParts {
  settings: ServerSettings;
  storage: Storage;
  broker: RunBroker;
  graphs: GraphRegistry;
  items: ItemStore;
  tracing?: Tracing;
  logger: Logger;
  apiUrl: () => string | undefined;
  exclusive: boolean;
  /** Runs of these owners are requeued at start (a crashed execution thread's). */
  requeueOwners?: string[];
  readsRunsFromDatabase: boolean;
  pollMs?: number;
  faults?: TestFaults;
  /** A run wrote a webhook delivery; undefined when webhooks are disabled. */
  webhooksQueued?: () => void;
  /** The worker's slots changed (a run started or ended). */
  slotsChanged?: () => void;
}

/** A run worker wired to the broker's cancellations and wake-ups, not started. */
export function newRunWorker(parts: WorkerParts): RunWorker {
  const { settings, storage, broker, logger } = parts;
  const control = new RunControl();
  broker.onCancel((runId, action) => control.abort(runId, action));
  const worker = new RunWorker(
    {
      storage,
      graphs: parts.graphs,
      broker,
      control,
      logger,
      maxAttempts: settings.maxAttempts,
      runTimeoutMs: settings.runTimeoutMs,
      // Other processes read runs from the database: keep stateless runs there for a minute.
      statelessKeepMs: parts.readsRunsFromDatabase ? 60_000 : undefined,
      // There, followers elsewhere read a run's events from its log; otherwise they get them live.
      eventLogIntervalMs: parts.readsRunsFromDatabase ? EVENT_LOG_INTERVAL_MS.logFollowed : EVENT_LOG_INTERVAL_MS.live,
      tracing: parts.tracing,
      store: new GraphStore(parts.items),
      webhooks: parts.webhooksQueued && { retryMs: settings.webhookRetryMs, queued: parts.webhooksQueued },
      apiUrl: () => settings.langgraphApiUrl || parts.apiUrl(),
    },
    {
      concurrency: settings.workers,
      leaseMs: settings.leaseMs,
      exclusiveDatabase: parts.exclusive,
      requeueOwners: parts.requeueOwners,
      pollMs: parts.pollMs,
      faults: parts.faults,
      slotsChanged: parts.slotsChanged,
    },
  );
  broker.onWake((availableAt) => worker.wake(availableAt));
  return worker;
}
