import { fileURLToPath } from "node:url";
import { launch } from "./launch.js";
import { DEFAULT_RESTART_POLICY, type RestartPolicy, SupervisedInstance } from "./supervised-instance.js";
import {
  type ComputeEvent,
  DeployError,
  type LogSink,
  type ServerInstance,
  type ServerSandbox,
  type ServerSpec,
} from "./types.js";

export { DeployError, type ComputeEvent, type LogSink, type ServerInstance, type ServerSandbox, type ServerSpec };
export type { RestartPolicy };

export interface LocalComputeOptions {
  /** The `berth` CLI script (default: this repository's packages/cli/bin/berth.mjs). */
  berthBin?: string;
  /** From spawn to `GET /ok` answering 200 (default 60 s). */
  healthTimeoutMs?: number;
  log: LogSink;
  onEvent?: (event: ComputeEvent) => void;
  /** Restart backoff (default 1 s doubling to 30 s, reset after 60 s up, give up after 10 in a row). */
  restartPolicy?: Partial<RestartPolicy>;
  /** SIGTERM grace of stop() without an argument (default 30 s: above the agent server's own 10 s shutdown grace). */
  stopGraceMs?: number;
  /** How servers are started (the listener's sandbox); without one, as plain child processes. */
  sandbox?: ServerSandbox;
}

const DEFAULT_BERTH_BIN = fileURLToPath(new URL("../../../cli/bin/berth.mjs", import.meta.url));

/**
 * Runs revisions as local agent-server processes (`berth serve --port 0`) and
 * keeps them running. Each process gets only the spec's environment over a
 * minimal base, and shares the deployment's data dir with the revision before
 * or after it (BERTH_SQLITE_SHARED=1); with a sandbox, both run as the
 * deployment's user, so they share it there too.
 */
export class LocalCompute {
  private readonly supervised = new Set<SupervisedInstance>();
  /** Starts in progress, so stopAll() can abandon them too. */
  private readonly starting = new Map<AbortController, Promise<unknown>>();
  private readonly policy: RestartPolicy;
  private closed = false;
  /** Last resort when the listener exits without stopAll() (an uncaught error): its children get SIGTERM, not orphaned. */
  private readonly onListenerExit = () => {
    for (const instance of this.supervised) {
      try {
        if (instance.pid) process.kill(instance.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
    }
  };

  constructor(private readonly options: LocalComputeOptions) {
    this.policy = { ...DEFAULT_RESTART_POLICY, ...options.restartPolicy };
  }

  /**
   * Starts a process for the revision; resolves once `GET /ok` answers 200.
   * Rejects with a DeployError (the reason and the last log lines) when the
   * process exits or is not healthy in time, or with the signal's reason when aborted.
   */
  async start(spec: ServerSpec, signal?: AbortSignal): Promise<ServerInstance> {
    if (this.closed) throw new DeployError("The listener is shutting down");
    signal?.throwIfAborted();
    const abort = new AbortController();
    const forward = () => abort.abort(signal?.reason);
    signal?.addEventListener("abort", forward, { once: true });
    const launchOnce = (launchSignal: AbortSignal) =>
      launch({
        berthBin: this.options.berthBin ?? DEFAULT_BERTH_BIN,
        spec,
        sandbox: this.options.sandbox,
        healthTimeoutMs: this.options.healthTimeoutMs ?? 60_000,
        killGraceMs: this.options.stopGraceMs ?? 30_000,
        onLine: (line) => this.options.log({ level: line.level, message: line.message, revisionId: spec.revisionId }),
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
        await first.terminate(this.options.stopGraceMs ?? 30_000);
        throw new DeployError("The listener is shutting down");
      }
      const instance = new SupervisedInstance(spec, first, await first.listening, {
        launch: launchOnce,
        onEvent: (event) => this.options.onEvent?.(event),
        onStopped: (stopped) => this.forget(stopped),
        policy: this.policy,
        defaultGraceMs: this.options.stopGraceMs ?? 30_000,
      });
      if (this.supervised.size === 0) process.on("exit", this.onListenerExit);
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
    if (this.supervised.size === 0) process.off("exit", this.onListenerExit);
  }
}
