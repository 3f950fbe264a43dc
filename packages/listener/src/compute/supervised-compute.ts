import type { OutputLine } from "./process-output.js";
import type { LaunchedProcess } from "./launched-process.js";
import { DEFAULT_RESTART_POLICY, type RestartPolicy, SupervisedInstance } from "./supervised-instance.js";
import { type ComputeEvent, DeployError, type LogSink, type ServerInstance, type ServerSpec } from "./types.js";

export interface SupervisedComputeOptions {
  /** From start to `GET /ok` answering 200 (default 60 s). */
  healthTimeoutMs?: number;
  log: LogSink;
  onEvent?: (event: ComputeEvent) => void;
  /** Restart backoff (default 1 s doubling to 30 s, reset after 60 s up, give up after 10 in a row). */
  restartPolicy?: Partial<RestartPolicy>;
  /** SIGTERM grace of stop() without an argument (default 30 s: above the agent server's own 10 s shutdown grace). */
  stopGraceMs?: number;
}

/** Starts one agent server of `spec` and resolves once it is healthy (see health.ts's untilServing). */
export type ServerLauncher = (
  spec: ServerSpec,
  options: { healthTimeoutMs: number; killGraceMs: number; onLine: (line: OutputLine) => void; signal: AbortSignal },
) => Promise<LaunchedProcess>;

/**
 * Runs revisions' agent servers, whatever starts them (`launcher`), and keeps
 * them running: restarts with backoff, status events, stop with a grace period.
 */
export class SupervisedCompute {
  private readonly supervised = new Set<SupervisedInstance>();
  /** Starts in progress, so stopAll() can abandon them too. */
  private readonly starting = new Map<AbortController, Promise<unknown>>();
  private readonly policy: RestartPolicy;
  private closed = false;

  constructor(
    private readonly settings: SupervisedComputeOptions,
    private readonly launcher: ServerLauncher,
  ) {
    this.policy = { ...DEFAULT_RESTART_POLICY, ...settings.restartPolicy };
  }

  /**
   * Starts a server for the revision; resolves once `GET /ok` answers 200.
   * Rejects with a DeployError (the reason and the last log lines) when the
   * server exits or is not healthy in time, or with the signal's reason when aborted.
   */
  async start(spec: ServerSpec, signal?: AbortSignal): Promise<ServerInstance> {
    if (this.closed) throw new DeployError("The listener is shutting down");
    signal?.throwIfAborted();
    const abort = new AbortController();
    const forward = () => abort.abort(signal?.reason);
    signal?.addEventListener("abort", forward, { once: true });
    const launchOnce = (launchSignal: AbortSignal) =>
      this.launcher(spec, {
        healthTimeoutMs: this.settings.healthTimeoutMs ?? 60_000,
        killGraceMs: this.settings.stopGraceMs ?? 30_000,
        onLine: (line) => this.settings.log({ level: line.level, message: line.message, revisionId: spec.revisionId }),
        signal: launchSignal,
      });
    const launching = launchOnce(abort.signal);
    this.starting.set(
      abort,
      launching.catch(() => {}),
    );
    try {
      const first = await launching;
      if (this.closed) {
        await first.terminate(this.settings.stopGraceMs ?? 30_000);
        throw new DeployError("The listener is shutting down");
      }
      const instance = new SupervisedInstance(spec, first, await first.listening, {
        launch: launchOnce,
        onEvent: (event) => this.settings.onEvent?.(event),
        onStopped: (stopped) => this.forget(stopped),
        policy: this.policy,
        defaultGraceMs: this.settings.stopGraceMs ?? 30_000,
      });
      if (this.supervised.size === 0) this.firstStarted();
      this.supervised.add(instance);
      return instance;
    } finally {
      signal?.removeEventListener("abort", forward);
      this.starting.delete(abort);
    }
  }

  /** Every instance it supervises (until stopped). */
  instances(): ServerInstance[] {
    return [...this.supervised];
  }

  /** Abandons starts in progress and stops every instance (gracefully, in parallel). */
  async stopAll(): Promise<void> {
    this.closed = true;
    for (const abort of this.starting.keys()) abort.abort(new DeployError("The listener is shutting down"));
    await Promise.all(this.starting.values());
    await Promise.all([...this.supervised].map((instance) => instance.stop()));
  }

  private forget(instance: SupervisedInstance): void {
    this.supervised.delete(instance);
    if (this.supervised.size === 0) this.lastStopped();
  }

  /** The first instance runs (again). */
  protected firstStarted(): void {}

  /** No instance runs any more. */
  protected lastStopped(): void {}
}
