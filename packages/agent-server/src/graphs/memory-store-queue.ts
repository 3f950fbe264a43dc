import { createRequire } from "node:module";
import { AsyncBatchedStore, type BaseStore, type Operation } from "@langchain/langgraph-checkpoint";

/*
 * LangGraph hands a run's store to its nodes wrapped in an AsyncBatchedStore,
 * so that the operations issued together reach the store as one batch. Its
 * queue is a loop that polls with `setTimeout(0)` (a 1 ms timer in Node) for as
 * long as the run lasts, and the run's end awaits the loop's pending timer:
 * every run that has a store, whether its graph uses it or not, ends ~0.6 ms
 * later on average and keeps a timer firing each millisecond while it runs.
 * The queue below keeps the batching (what is queued within one turn of the
 * event loop is one batch) but is drained when operations arrive, and
 * stopping it waits only for a batch under way.
 */

interface QueuedOperation {
  operation: Operation;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The fields of AsyncBatchedStore the queue uses (the library's own names). */
interface BatchedStoreFields {
  store: BaseStore;
  queue: Map<number, QueuedOperation>;
  nextKey: number;
  running: boolean;
  processingTask: Promise<void> | null;
}

type BatchedStorePrototype = {
  start(this: BatchedStoreFields): void;
  stop(this: BatchedStoreFields): Promise<void>;
  enqueueOperation(this: BatchedStoreFields, operation: Operation): Promise<unknown>;
  processBatchQueue?: unknown;
};

const drained = new WeakSet<object>();

/**
 * Gives Berth's copy of AsyncBatchedStore (ESM, and the CommonJS one once a
 * project's graphs have loaded it) the queue above. A version of the library
 * whose class no longer has the polling loop is left as it is.
 */
export function drainStoreQueuesOnArrival(): void {
  replaceQueue(AsyncBatchedStore.prototype as unknown as BatchedStorePrototype);
  const require = createRequire(import.meta.url);
  const commonJs = require.cache[require.resolve("@langchain/langgraph-checkpoint")]?.exports as
    | { AsyncBatchedStore?: { prototype: BatchedStorePrototype } }
    | undefined;
  if (commonJs?.AsyncBatchedStore) replaceQueue(commonJs.AsyncBatchedStore.prototype);
}

function replaceQueue(prototype: BatchedStorePrototype): void {
  if (drained.has(prototype) || typeof prototype.processBatchQueue !== "function") return;
  drained.add(prototype);
  prototype.start = function () {
    this.running = true;
  };
  prototype.stop = async function () {
    this.running = false;
    await this.processingTask;
  };
  prototype.enqueueOperation = function (operation) {
    return new Promise((resolve, reject) => {
      this.queue.set(this.nextKey++, { operation, resolve, reject });
      this.processingTask ??= drain(this);
    });
  };
}

/** Sends what is queued as one batch per turn of the event loop until the queue is empty. */
async function drain(store: BatchedStoreFields): Promise<void> {
  try {
    while (store.queue.size > 0) {
      await new Promise((resolve) => setImmediate(resolve)); // operations issued in this turn join the batch
      const batch = [...store.queue.values()];
      store.queue.clear();
      try {
        const results = await store.store.batch(batch.map((queued) => queued.operation));
        for (const [i, queued] of batch.entries()) queued.resolve(results[i]);
      } catch (error) {
        for (const queued of batch) queued.reject(error);
      }
    }
  } finally {
    store.processingTask = null;
  }
}
