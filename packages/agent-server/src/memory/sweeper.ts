import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Logger } from "../logger.js";
import type { StoreRepository } from "../storage/memory-store-types.js";

/** Items deleted per statement: short transactions, so requests and runs are never held behind a sweep. */
const BATCH = 500;
/** At most this many batches per sweep; what remains waits for the next one. */
const MAX_BATCHES = 200;
/** setInterval's longest delay (about 24.8 days); a longer one would fire at once. */
const MAX_INTERVAL_MS = 2 ** 31 - 1;

export interface StoreSweeper {
  stop(): Promise<void>;
}

/**
 * Deletes expired store items every `intervalMs`, in bounded batches. Every
 * process sweeps: deletes are idempotent, and expired items are already
 * invisible to reads, so sweeping only reclaims space.
 */
export function startStoreSweeper(repository: StoreRepository, intervalMs: number, logger: Logger): StoreSweeper {
  return startBatchSweeper({
    sweepBatch: (limit) => repository.sweepExpired(limit),
    intervalMs,
    logger,
    what: "expired store items",
  });
}

export interface BatchSweep {
  sweepBatch: (limit: number) => Promise<number>;
  intervalMs: number;
  logger: Logger;
  /** The deleted things, as logs name them. */
  what: string;
}

/**
 * Calls `sweepBatch(500)` every `intervalMs` until it deletes fewer (at most
 * 200 batches a sweep), yielding between batches; `what` names the deleted
 * things in logs. Also sweeps expired threads (server-background.ts).
 */
export function startBatchSweeper({ sweepBatch, intervalMs, logger, what }: BatchSweep): StoreSweeper {
  let current: Promise<void> | undefined;
  let stopped = false;
  const sweep = async () => {
    let deleted = 0;
    for (let round = 0; round < MAX_BATCHES && !stopped; round++) {
      const count = await sweepBatch(BATCH);
      deleted += count;
      if (count < BATCH) break;
      await yieldToEventLoop();
    }
    if (deleted > 0) logger.info({ deleted }, `${what} deleted`);
  };
  const timer = setInterval(
    () => {
      if (current) return; // the previous sweep is still going
      current = sweep()
        .catch((err) => logger.warn({ err }, `sweeping ${what} failed (retried at the next interval)`))
        .finally(() => {
          current = undefined;
        });
    },
    Math.min(intervalMs, MAX_INTERVAL_MS),
  );
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}
