import type { GraphRegistry } from "../graphs/registry.js";
import type { RunBroker } from "../runs/brokers/broker.js";
import type { RunStatsSnapshot } from "../runs/execution/run-stats.js";
import type { SlotReservation, WorkerSlots } from "../runs/execution/worker.js";
import type { Storage } from "../storage/types.js";
import type { ItemStore } from "../memory/item-store.js";
import { AssistantService } from "./assistants.js";
import { CronService } from "./crons.js";
import { GraphStateService } from "./graph-state.js";
import { MaintenanceService } from "./maintenance.js";
import { MetricsService } from "./metrics.js";
import { RunService } from "./runs.js";
import { StoreService } from "./memory-store.js";
import { ThreadProtocolService } from "./thread-protocol.js";
import { ThreadService, type ThreadServiceOptions } from "./threads.js";
import { WebhookService, type WebhookServiceOptions } from "./webhooks.js";

export interface Services {
  assistants: AssistantService;
  threads: ThreadService;
  graphState: GraphStateService;
  runs: RunService;
  crons: CronService;
  maintenance: MaintenanceService;
  metrics: MetricsService;
  store: StoreService;
  webhooks: WebhookService;
  protocol: ThreadProtocolService;
}

/** What services use of the worker of their process. */
export interface LocalWorker {
  slots(): WorkerSlots;
  runStats(): RunStatsSnapshot;
  reserveSlot(): SlotReservation | undefined;
}

/** What the services are made of. */
export interface ServiceDeps {
  storage: Storage;
  graphs: GraphRegistry;
  broker: RunBroker;
  items: ItemStore;
  threads?: ThreadServiceOptions;
  webhooks?: WebhookServiceOptions;
  /** This process's worker, when it executes runs: its slots (GET /metrics), and a slot for a run being created. */
  worker?: LocalWorker;
}

export function createServices({ storage, graphs, broker, items, worker, ...options }: ServiceDeps): Services {
  const assistants = new AssistantService(storage, graphs);
  const webhooks = new WebhookService(storage, options.webhooks);
  const runs = new RunService(storage, graphs, assistants, broker, webhooks, worker && (() => worker.reserveSlot()));
  const graphState = new GraphStateService(storage, graphs);
  return {
    assistants,
    threads: new ThreadService(storage, graphs, options.threads),
    graphState,
    protocol: new ThreadProtocolService(storage, runs, graphState, broker),
    runs,
    crons: new CronService(storage, runs),
    maintenance: new MaintenanceService(storage, graphs, broker),
    metrics: new MetricsService(storage, worker),
    store: new StoreService(items),
    webhooks,
  };
}
