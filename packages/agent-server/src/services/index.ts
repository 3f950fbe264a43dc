import type { GraphRegistry } from "../graphs/registry.js";
import type { RunBroker } from "../runs/brokers/broker.js";
import type { WorkerSlots } from "../runs/execution/worker.js";
import type { Storage } from "../storage/types.js";
import type { ItemStore } from "../store/item-store.js";
import { AssistantService } from "./assistants.js";
import { CronService } from "./crons.js";
import { GraphStateService } from "./graph-state.js";
import { MaintenanceService } from "./maintenance.js";
import { MetricsService } from "./metrics.js";
import { RunService } from "./runs.js";
import { StoreService } from "./store.js";
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
}

export function createServices(
  storage: Storage,
  graphs: GraphRegistry,
  broker: RunBroker,
  items: ItemStore,
  threadOptions?: ThreadServiceOptions,
  webhookOptions?: WebhookServiceOptions,
  /** This process's run slots, when it executes runs (GET /metrics). */
  workerSlots?: () => WorkerSlots,
): Services {
  const assistants = new AssistantService(storage, graphs);
  const webhooks = new WebhookService(storage, webhookOptions);
  const runs = new RunService(storage, graphs, assistants, broker, webhooks);
  return {
    assistants,
    threads: new ThreadService(storage, graphs, threadOptions),
    graphState: new GraphStateService(storage, graphs),
    runs,
    crons: new CronService(storage, runs),
    maintenance: new MaintenanceService(storage, graphs),
    metrics: new MetricsService(storage, workerSlots),
    store: new StoreService(items),
    webhooks,
  };
}
