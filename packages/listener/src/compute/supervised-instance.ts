import { describeExit, type Exit, type LaunchedProcess } from "./launched-process.js";
import type { ComputeEvent, ServerInstance, ServerSpec } from "./types.js";

export interface RestartPolicy {
  /** First delay after a crash; doubles with each crash in a row. */
  initialMs: number;
  maxMs: number;
  /** A process that stayed up this long before crashing starts the series over. */
  resetAfterMs: number;
  /** Crashes (or failed restarts) in a row before giving up. */
  maxFailures: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialMs: 1000, maxMs: 30_000, resetAfterMs: 60_000, maxFailures: 10 };

export interface SupervisionContext {
  /** Starts a fresh process of the same spec (healthy when it resolves). */
  launch(signal: AbortSignal): Promise<LaunchedProcess>;
  onEvent(event: ComputeEvent): void;
  onStopped(instance: SupervisedInstance): void;
  policy: RestartPolicy;
  defaultGraceMs: number;
}

/**
 * A revision's agent server, kept running: a process that exits on its own is
 * restarted with exponential backoff, possibly on another port (see onUrlChange).
 */
export class SupervisedInstance implements ServerInstance {
  private process: LaunchedProcess | undefined;
  private currentUrl = "";
  private healthySince = 0;
  private failures = 0;
  private readonly supervision = new AbortController();
  private restarting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private stopGraceMs: number;
  private readonly urlListeners = new Set<(url: string) => void>();

  constructor(
    private readonly spec: ServerSpec,
    first: LaunchedProcess,
    firstUrl: string,
    private readonly context: SupervisionContext,
  ) {
    this.stopGraceMs = context.defaultGraceMs;
    this.adopt(first, firstUrl);
  }

  get deploymentId(): string {
    return this.spec.deploymentId;
  }

  get revisionId(): string {
    return this.spec.revisionId;
  }

  get url(): string {
    return this.currentUrl;
  }

  get pid(): number {
    return this.process?.pid ?? 0;
  }

  get graphs(): readonly string[] | undefined {
    return this.process?.graphs;
  }

  healthy(): boolean {
    return this.process !== undefined && !this.process.hasExited() && !this.supervision.signal.aborted;
  }

  onUrlChange(listener: (url: string) => void): () => void {
    this.urlListeners.add(listener);
    return () => this.urlListeners.delete(listener);
  }

  stop(graceMs?: number): Promise<void> {
    this.stopping ??= this.shutdown(graceMs ?? this.context.defaultGraceMs);
    return this.stopping;
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.stopGraceMs = graceMs;
    this.supervision.abort(); // ends a backoff wait; a restart in progress terminates its process
    try {
      await this.process?.terminate(graceMs);
      await this.restarting;
    } finally {
      this.process = undefined;
      this.context.onStopped(this);
    }
  }

  private adopt(process: LaunchedProcess, url: string): void {
    this.process = process;
    this.healthySince = Date.now();
    const moved = this.currentUrl !== "" && this.currentUrl !== url;
    this.currentUrl = url;
    void process.exited.then((exit) => this.onExit(process, exit));
    if (moved) for (const listener of this.urlListeners) listener(url);
  }

  private onExit(process: LaunchedProcess, exit: Exit): void {
    if (this.supervision.signal.aborted || process !== this.process) return; // stopped on purpose
    this.process = undefined;
    if (Date.now() - this.healthySince >= this.context.policy.resetAfterMs) this.failures = 0;
    const stderr = process.tail.lastStderrLine();
    this.restarting = this.restart(`The agent server ${describeExit(exit)}${stderr ? `: ${stderr}` : ""}`).finally(() => {
      this.restarting = undefined;
    });
  }

  /** Waits out the backoff and starts a new process, until one is healthy, supervision stops or too many failed in a row. */
  private async restart(firstReason: string): Promise<void> {
    const { policy } = this.context;
    const signal = this.supervision.signal;
    let reason = firstReason;
    for (;;) {
      this.failures += 1;
      if (this.failures > policy.maxFailures) {
        this.emit("gave_up", `${reason}; giving up after ${policy.maxFailures} failures in a row (redeploy to try again)`);
        return;
      }
      const delayMs = Math.min(policy.initialMs * 2 ** (this.failures - 1), policy.maxMs);
      this.emit("crashed", `${reason}; restarting in ${delayMs / 1000} s`);
      if (!(await delay(delayMs, signal))) return;
      try {
        const next = await this.context.launch(signal);
        if (signal.aborted) {
          await next.terminate(this.stopGraceMs);
          return;
        }
        const previousUrl = this.currentUrl;
        this.adopt(next, await next.listening);
        const where = this.currentUrl === previousUrl ? this.currentUrl : `${this.currentUrl} (was ${previousUrl})`;
        this.emit("restarted", `Restarted the agent server (restart ${this.failures} in a row); serving at ${where}`);
        return;
      } catch (error) {
        if (signal.aborted) return;
        reason = `Restarting failed: ${(error as Error).message.split("\n")[0]}`;
      }
    }
  }

  private emit(kind: ComputeEvent["kind"], message: string): void {
    this.context.onEvent({ deploymentId: this.deploymentId, revisionId: this.revisionId, kind, message });
  }
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
