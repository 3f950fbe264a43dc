import { Worker } from "node:worker_threads";
import type { LeaseKeeper } from "../types.js";

/** What a lease thread tells the process: runs whose lease another attempt took, or a failed renewal. */
type LeaseThreadMessage = { lost: string[] } | { error: string };

/** How long a stopping thread may take to close its connection before it is terminated. */
const STOP_WAIT_MS = 2_000;

/**
 * Lease renewal in a worker thread with its own database connection (the
 * `script`, given `workerData` plus `owner` and `leaseMs`), so a graph that
 * blocks the event loop cannot let its run's lease lapse and have it executed
 * twice. The thread renews the runs it was told to hold, every third of a lease.
 */
export function threadLeaseKeeper(script: URL, workerData: Record<string, unknown>): LeaseKeeper {
  return (owner, leaseMs, events) => {
    const thread = new Worker(script, { workerData: { ...workerData, owner, leaseMs } });
    thread.unref();
    const exited = new Promise((resolve) => thread.once("exit", resolve));
    thread.on("message", (message: LeaseThreadMessage) => {
      if ("lost" in message) events.lost(message.lost);
      else events.failed(message.error);
    });
    thread.on("error", (error) => events.failed(`lease thread stopped: ${String(error)}`));
    return {
      hold: (run) => thread.postMessage({ hold: run }),
      drop: (runId) => thread.postMessage({ drop: runId }),
      async stop() {
        thread.postMessage("stop");
        // A renewal stuck on an unanswering database must not hold the shutdown: the thread is ended after a while.
        const ending = setTimeout(() => void thread.terminate(), STOP_WAIT_MS);
        await exited;
        clearTimeout(ending);
      },
    };
  };
}
