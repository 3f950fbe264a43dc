import { fileURLToPath } from "node:url";
import { launch } from "./launch.js";
import { SupervisedCompute, type SupervisedComputeOptions } from "./supervised-compute.js";
import type { ServerSandbox } from "./types.js";

export interface LocalComputeOptions extends SupervisedComputeOptions {
  /** The `berth` CLI script (default: this repository's packages/cli/bin/berth.mjs). */
  berthBin?: string;
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
export class LocalCompute extends SupervisedCompute {
  /** Last resort when the listener exits without stopAll() (an uncaught error): its children get SIGTERM, not orphaned. */
  private readonly onListenerExit = () => {
    for (const instance of this.instances()) {
      try {
        if (instance.pid) process.kill(instance.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
    }
  };

  constructor(options: LocalComputeOptions) {
    super(options, (spec, launchOptions) =>
      launch({ ...launchOptions, spec, berthBin: options.berthBin ?? DEFAULT_BERTH_BIN, sandbox: options.sandbox }),
    );
  }

  protected override firstStarted(): void {
    process.on("exit", this.onListenerExit);
  }

  protected override lastStopped(): void {
    process.off("exit", this.onListenerExit);
  }
}
