import type { GraphRegistry } from "../graphs/registry.js";
import type { RunBroker } from "../runs/brokers/broker.js";
import type { Storage } from "../storage/types.js";
import { AssistantService } from "./assistants.js";
import { GraphStateService } from "./graph-state.js";
import { MaintenanceService } from "./maintenance.js";
import { RunService } from "./runs.js";
import { ThreadService } from "./threads.js";

export interface Services {
  assistants: AssistantService;
  threads: ThreadService;
  graphState: GraphStateService;
  runs: RunService;
  maintenance: MaintenanceService;
}

export function createServices(storage: Storage, graphs: GraphRegistry, broker: RunBroker): Services {
  const assistants = new AssistantService(storage, graphs);
  return {
    assistants,
    threads: new ThreadService(storage, graphs),
    graphState: new GraphStateService(storage, graphs),
    runs: new RunService(storage, graphs, assistants, broker),
    maintenance: new MaintenanceService(storage, graphs),
  };
}
