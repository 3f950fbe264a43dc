import type { Logger } from "../logger.js";

/** After the tracing service was found unreachable, runs ask for no feedback URL this long before one tries again. */
export const RETRY_TRACING_AFTER_MS = 10_000;

/**
 * Whether the tracing service answers, from what Berth's requests to it saw.
 * While it does not, runs ask it for no feedback URL: a run's end waits for
 * its URLs (up to a deadline), and a service that swallows connections would
 * hold every run that long. A run started RETRY_TRACING_AFTER_MS after the last
 * failure asks again, which is the probe: the first answer ends the pause.
 */
export class TracingHealth {
  private lastFailureAt = Number.NEGATIVE_INFINITY;
  /** The latest news (in the order requests ended) is a failure. */
  private failing = false;

  constructor(
    private readonly logger: Logger,
    private readonly endpoint: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The service answered (whatever the status: it is there). */
  answered(): void {
    if (this.failing) {
      this.failing = false;
      this.logger.info({ tracing_endpoint: this.endpoint }, "tracing service reachable again");
    }
  }

  /** A request could not reach the service (refused, reset, timed out). */
  unreachable(): void {
    this.lastFailureAt = this.now();
    if (!this.failing) {
      this.failing = true;
      this.logger.warn(
        { tracing_endpoint: this.endpoint, retry_after_ms: RETRY_TRACING_AFTER_MS },
        "tracing service unreachable: traces are lost and runs get no feedback URLs while it is (tried again 10 s after the last failure)",
      );
    }
  }

  /** False while the service's last news is a failure less than RETRY_TRACING_AFTER_MS old. */
  up(): boolean {
    return !(this.failing && this.now() - this.lastFailureAt < RETRY_TRACING_AFTER_MS);
  }
}
