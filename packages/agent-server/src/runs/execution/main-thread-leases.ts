import type { LeaseKeeper, RunRepository } from "../../storage/types.js";

/**
 * Lease renewal on the main thread's timer, for a process that owns its
 * database (embedded SQLite): nobody else requeues its runs, and its own
 * sweeps never touch the runs it executes, so a blocked event loop costs
 * nothing here.
 */
export function mainThreadLeases(runs: RunRepository): LeaseKeeper {
  return (owner, leaseMs, events) => {
    const held = new Map<string, number>();
    const renew = async () => {
      if (held.size === 0) return;
      const snapshot = [...held].map(([run_id, attempt]) => ({ run_id, attempt }));
      try {
        const lost = (await runs.heartbeat(owner, leaseMs, snapshot)).filter((runId) =>
          snapshot.some((run) => run.run_id === runId && held.get(runId) === run.attempt),
        );
        for (const runId of lost) held.delete(runId);
        if (lost.length > 0) events.lost(lost);
      } catch (error) {
        events.failed(String(error));
      }
    };
    const timer = setInterval(() => void renew(), Math.max(100, leaseMs / 3));
    timer.unref();
    return {
      hold: (run) => void held.set(run.run_id, run.attempt),
      drop: (runId) => void held.delete(runId),
      async stop() {
        clearInterval(timer);
      },
    };
  };
}
