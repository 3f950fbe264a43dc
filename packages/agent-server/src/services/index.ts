import type { GraphRegistry } from "../graphs/registry.js";
import type { RunBroker } from "../runs/brokers/broker.js";
import type { Storage } from "../storage/types.js";
import type { ItemStore } from "../store/item-store.js";
import { AssistantService } from "./assistants.js";
import { GraphStateService } from "./graph-state.js";
import { MaintenanceService } from "./maintenance.js";
import { RunService } from "./runs.js";
import { StoreService } from "./store.js";
import { ThreadService, type ThreadServiceOptions } from "./threads.js";

export interface Services {
  assistants: AssistantService;
  threads: ThreadService;
  graphState: GraphStateService;
  runs: RunService;
  maintenance: MaintenanceService;
  store: StoreService;
}

export function createServices(
  storage: Storage,
  graphs: GraphRegistry,
  broker: RunBroker,
  items: ItemStore,
  threadOptions?: ThreadServiceOptions,
): Services {
  const assistants = new AssistantService(storage, graphs);
  return {
    assistants,
    threads: new ThreadService(storage, graphs, threadOptions),
    graphState: new GraphStateService(storage, graphs),
    runs: new RunService(storage, graphs, assistants, broker),
    maintenance: new MaintenanceService(storage, graphs),
    store: new StoreService(items),
  };
}
