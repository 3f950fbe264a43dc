import type { GraphRegistry } from "../graphs/registry.js";
import type { RunBroker } from "../runs/brokers/broker.js";
import type { Storage, StorageSizes, TruncateParts } from "../storage/types.js";
import { systemAssistantId } from "./assistant-ids.js";

/** Flags of a truncate request. */
export type TruncateRequest = Partial<TruncateParts>;

/** How long measured sizes are served before the tables are scanned again. */
const SIZES_TTL_MS = 30_000;

/** Operator actions that act on the whole server rather than one resource. */
export class MaintenanceService {
  private sizesCache: { at: number; sizes: Promise<StorageSizes> } | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly graphs: GraphRegistry,
    private readonly broker: RunBroker,
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
    // Runs under way go with their rows: they are stopped (else they would go on writing checkpoints of emptied
    // threads) and whoever waits on or streams them is told they ended, rather than waiting for an end never recorded.
    const emptiesRuns = parts.runs || parts.threads;
    const active = emptiesRuns ? await this.storage.runs.findActive({ status: "all" }) : [];
    await this.storage.truncate(parts, this.graphs.ids().map(systemAssistantId));
    for (const { run_id } of active) {
      this.broker.cancel(run_id, "interrupt");
      this.broker.end(run_id, { status: "interrupted", output: null });
    }
  }

  /**
   * The storage's counts and bytes, measured at most every 30 s: measuring
   * scans tables, and /info may be polled. Concurrent callers share one measure.
   */
  sizes(): Promise<StorageSizes> {
    const now = Date.now();
    if (!this.sizesCache || now - this.sizesCache.at > SIZES_TTL_MS) {
      const sizes = this.storage.sizes();
      this.sizesCache = { at: now, sizes };
      // A failed measure is not kept: the next request measures again.
      sizes.catch(() => {
        if (this.sizesCache?.sizes === sizes) this.sizesCache = undefined;
      });
    }
    return this.sizesCache.sizes;
  }
}
