import type { Logger } from "@berth/service-kit";
import type { ClusterConnection } from "../../../compute/cluster/cluster-connection.js";
import { compareTimestamps, readPodLogs } from "../../../compute/cluster/pod-logs.js";
import type { LogShipper } from "../../log-shipper.js";

interface Followed {
  revisionId: string;
  namespace: string;
  /** The newest line's timestamp read so far, and the lines read at that very time (sinceTime includes them again). */
  since?: string;
  seenAtSince: Set<string>;
}

/**
 * A cluster runs the servers, so their output is in its pod logs: a cluster
 * listener reads them at an interval (from the last line it read) into the
 * deployment's deploy log, as the other listeners ship their servers' output.
 */
export class ClusterLogs {
  private readonly followed = new Map<string, Followed>();
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly connection: ClusterConnection,
    private readonly logs: LogShipper,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  /** Reads the deployment's pod logs into the revision's deploy log from now on. */
  follow(deploymentId: string, revisionId: string, namespace: string): void {
    this.followed.set(deploymentId, { revisionId, namespace, seenAtSince: new Set() });
    this.timer ??= setInterval(() => {
      this.reading ??= this.readAll().finally(() => (this.reading = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  forget(deploymentId: string): void {
    this.followed.delete(deploymentId);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.reading;
  }

  private async readAll(): Promise<void> {
    for (const [deploymentId, followed] of this.followed) {
      try {
        const lines = await readPodLogs(this.connection, followed.namespace, deploymentId, {
          ...(followed.since ? { sinceTime: followed.since } : { tailLines: 200 }),
        });
        const write = this.logs.writer(deploymentId, followed.revisionId, "deploy");
        for (const line of lines) {
          const space = line.indexOf(" ");
          const at = line.slice(0, space);
          // The API server may answer from before sinceTime (it can round it to the second): those lines were read.
          const order = followed.since ? compareTimestamps(at, followed.since) : 1;
          if (order < 0 || (order === 0 && followed.seenAtSince.has(line))) continue;
          if (order > 0) {
            followed.since = at;
            followed.seenAtSince.clear();
          }
          followed.seenAtSince.add(line);
          write({ level: "info", message: line.slice(space + 1) });
        }
      } catch (err) {
        this.logger.warn({ err, deployment_id: deploymentId }, "reading a deployment's pod logs failed");
      }
    }
  }
}
