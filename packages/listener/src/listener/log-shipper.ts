import type { LogEntry, LogKind } from "@berth/listener-protocol";
import type { ControlPlaneLink } from "./link.js";

/** Most lines kept while the control plane is unreachable; older ones are dropped first. */
const MAX_PENDING = 20_000;
const FLUSH_MS = 250;

/**
 * Build and server log lines, batched to the control plane every 250 ms.
 * Logs are best effort: a line that cannot be shipped is retried with the
 * next batch, and dropped only when too many pile up.
 */
export class LogShipper {
  private pending: LogEntry[] = [];
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly link: ControlPlaneLink,
    private readonly onError: (error: unknown) => void,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** A line-writer for one deployment, revision and kind of log. */
  writer(deploymentId: string, revisionId: string | null, kind: LogKind) {
    return (entry: { level: string; message: string }) =>
      this.add({ deployment_id: deploymentId, revision_id: revisionId, kind, timestamp: new Date().toISOString(), ...entry });
  }

  add(entry: LogEntry): void {
    this.pending.push({ ...entry, message: entry.message.slice(0, 16_000) });
    if (this.pending.length > MAX_PENDING) this.pending.splice(0, this.pending.length - MAX_PENDING);
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.length === 0) return;
      const batch = this.pending.splice(0, 2000);
      try {
        await this.link.appendLogs(batch);
      } catch (error) {
        this.pending.unshift(...batch);
        this.onError(error);
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
