export type CancelAction = "interrupt" | "rollback";

/** Why a run's execution was aborted. */
export type AbortReason = CancelAction | "timeout" | "shutdown";

/** Abort handles of the runs executing in this process. */
export class RunControl {
  private readonly controllers = new Map<string, AbortController>();

  register(runId: string): AbortController {
    const controller = new AbortController();
    this.controllers.set(runId, controller);
    return controller;
  }

  release(runId: string): void {
    this.controllers.delete(runId);
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
