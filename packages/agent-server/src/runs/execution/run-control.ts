import type { CancelAction } from "../../storage/types.js";

/**
 * Why a run's execution was aborted: a cancel, its timeout, a shutdown (the
 * run is handed back to the queue), its lease taken by another attempt, or a
 * failure of Berth's own around the graph (its event log could not be written).
 */
export type AbortReason = CancelAction | "timeout" | "shutdown" | "lease_lost" | "failure";

/** Abort handles of the runs executing in this process. */
export class RunControl {
  private readonly controllers = new Map<string, AbortController>();

  register(runId: string): AbortController {
    const controller = new AbortController();
    this.controllers.set(runId, controller);
    return controller;
  }

  /** Forgets the run's handle (only `controller`'s, when given: a later attempt here may have registered its own). */
  release(runId: string, controller?: AbortController): void {
    if (!controller || this.controllers.get(runId) === controller) this.controllers.delete(runId);
  }

  /** Aborts a run executing here; false when it is not running in this process. */
  abort(runId: string, reason: AbortReason): boolean {
    const controller = this.controllers.get(runId);
    if (!controller) return false;
    if (!controller.signal.aborted) controller.abort(reason);
    return true;
  }

  runningIds(): string[] {
    return [...this.controllers.keys()];
  }
}
