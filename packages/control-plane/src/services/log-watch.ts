import { EventEmitter } from "node:events";

/** Wakes one log stream: at the next change of its deployment, or after a while. */
export interface LogWakeups {
  /** Resolves at a change since the last call (at once if one came meanwhile), after `ms`, or when the stream is aborted. */
  next(ms: number): Promise<void>;
  /** Stops listening. */
  close(): void;
}

/**
 * Tells the log streams of a deployment that lines were appended or a
 * revision moved, in this process. A change made by another control-plane
 * process is not heard: streams also read again now and then.
 */
export class LogWatch {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  changed(deploymentId: string): void {
    this.emitter.emit(deploymentId);
  }

  subscribe(deploymentId: string, signal: AbortSignal): LogWakeups {
    // A change while the stream reads (not waiting) is remembered, so the next wait ends at once.
    let pending = false;
    let wake: (() => void) | undefined;
    const onChange = () => {
      pending = true;
      wake?.();
    };
    this.emitter.on(deploymentId, onChange);
    signal.addEventListener("abort", onChange);
    return {
      next: (ms) =>
        new Promise((resolve) => {
          const done = () => {
            clearTimeout(timer);
            wake = undefined;
            pending = false;
            resolve();
          };
          const timer = setTimeout(done, ms);
          if (pending || signal.aborted) done();
          else wake = done;
        }),
      close: () => {
        this.emitter.off(deploymentId, onChange);
        signal.removeEventListener("abort", onChange);
        wake?.();
      },
    };
  }
}
