import type { GraphRegistry } from "../graphs/registry.js";
import type { Storage, TruncateParts } from "../storage/types.js";
import { systemAssistantId } from "./assistant-ids.js";

/** Flags of a truncate request. */
export type TruncateRequest = Partial<TruncateParts>;

/** Operator actions that act on the whole server rather than one resource. */
export class MaintenanceService {
  constructor(
    private readonly storage: Storage,
    private readonly graphs: GraphRegistry,
  ) {}

  /** Empties what the flags name; the graphs' system assistants survive, as on the official server. */
  async truncate(request: TruncateRequest): Promise<void> {
    const parts: TruncateParts = {
      runs: request.runs ?? false,
      threads: request.threads ?? false,
      assistants: request.assistants ?? false,
      checkpointer: request.checkpointer ?? false,
      store: request.store ?? false,
    };
    await this.storage.truncate(parts, this.graphs.ids().map(systemAssistantId));
  }
}
