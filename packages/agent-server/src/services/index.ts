import type { GraphRegistry } from "../graphs/registry.js";
import type { Storage } from "../storage/types.js";
import { AssistantService } from "./assistants.js";
import { StateService } from "./state.js";
import { ThreadService } from "./threads.js";

export interface Services {
  assistants: AssistantService;
  threads: ThreadService;
  state: StateService;
}

export function createServices(storage: Storage, graphs: GraphRegistry): Services {
  return {
    assistants: new AssistantService(storage, graphs),
    threads: new ThreadService(storage, graphs),
    state: new StateService(storage, graphs),
  };
}
