import { copyFile, link, rm } from "node:fs/promises";
import type { RevisionStatus } from "@berth/listener-protocol";
import type { Logger } from "@berth/service-kit";
import type { ControlPlaneSettings } from "./config/settings.js";
import type { ChangeFeed } from "./services/change-feed.js";
import type { ListenerApi, ListenerScope } from "./services/listener-api.js";
import type { DeploymentReport, LogEntry, MetricSample, RevisionEventInput, RevisionFacts } from "@berth/listener-protocol";
import { type ControlPlaneLink, type RunningListener, startListener } from "@berth/listener";

export interface EmbeddedListenerOptions {
  api: ListenerApi;
  changes: ChangeFeed;
  settings: ControlPlaneSettings;
  /** The listener's builds, install cache and deployments' databases. */
  dataDir: string;
  /** Where the router listens when BERTH_ROUTER_HOST names no other address: the control plane's host. */
  host: string;
  /** The control plane's own URL, known once it listens. */
  controlPlaneUrl: () => string | undefined;
  logger: Logger;
}

/**
 * The listener of deployments that name none, in this process. It looks
 * again at once whenever what it must run changes (a deployment made,
 * changed or deleted, a revision made or interrupted, a branch moved), by
 * whatever made the change: a request, its own branch poller, another
 * control-plane process sharing the database.
 */
export async function startEmbeddedListener(options: EmbeddedListenerOptions): Promise<RunningListener> {
  const { settings } = options;
  const listener = await startListener({
    link: new InProcessLink(options.api, options.controlPlaneUrl),
    dataDir: options.dataDir,
    router: {
      host: settings.routerHost ?? options.host,
      port: settings.routerPort,
      publicUrl: settings.routerPublicUrl,
      authCacheMs: settings.routerAuthCacheMs,
    },
    logger: options.logger,
    pollMs: settings.listenerPollMs,
    drainTimeoutMs: settings.drainTimeoutMs,
    trustAllCode: settings.trustAllCode,
    sandboxEgressAllow: settings.sandboxEgressAllow,
    compute:
      settings.listenerCompute === "docker"
        ? { type: "docker", engine: settings.containerEngine, bindAllowList: settings.containerBindAllow }
        : { type: "local" },
    secretsFile: settings.listenerSecretsFile,
  });
  const stopWaking = wakeOnNewWork(options.changes, () => listener.wake());
  return {
    ...listener,
    async close() {
      stopWaking();
      await listener.close();
    },
  };
}

/**
 * Calls `wake` at every change of what a listener must run; a report is a
 * listener's own news about a deployment, not work for it. Returns what stops it.
 */
export function wakeOnNewWork(changes: ChangeFeed, wake: () => void): () => void {
  return changes.subscribe("deployment", (change) => {
    if (change.change !== "reported") wake();
  });
}

/** The embedded listener's link: direct calls, scoped to deployments that name no listener. */
export class InProcessLink implements ControlPlaneLink {
  private readonly scope: ListenerScope = { kind: "embedded" };

  constructor(
    private readonly api: ListenerApi,
    /** The control plane's own URL, known once it listens. */
    private readonly controlPlaneUrl: () => string | undefined,
  ) {}

  tracingEndpoint(): string | undefined {
    const url = this.controlPlaneUrl();
    return url && `${url}/api/v1`;
  }

  assignments() {
    return this.api.assignments(this.scope);
  }

  async transition(
    revisionId: string,
    from: readonly RevisionStatus[],
    to: RevisionStatus,
    message: string,
    report?: DeploymentReport,
    facts?: RevisionFacts,
  ): Promise<boolean> {
    return (await this.api.transition(this.scope, revisionId, [...from], to, message, report, facts)).transitioned;
  }

  report(deploymentId: string, report: DeploymentReport) {
    return this.api.report(this.scope, deploymentId, report);
  }

  recordEvent(revisionId: string, event: RevisionEventInput) {
    return this.api.recordEvent(this.scope, revisionId, event);
  }

  async branchMoved(deploymentId: string, head: string): Promise<void> {
    await this.api.branchMoved(this.scope, deploymentId, head);
  }

  purge(deploymentId: string) {
    return this.api.purge(this.scope, deploymentId);
  }

  /**
   * A hard link to the upload rather than a copy: an upload is only ever
   * replaced by a rename, never rewritten in place, so the build reads the
   * bytes that were uploaded and hashed. Copied across file systems.
   */
  async fetchSource(revisionId: string, destination: string): Promise<void> {
    const source = await this.api.sourceFile(this.scope, revisionId);
    await rm(destination, { force: true });
    try {
      await link(source, destination);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EXDEV" && code !== "EPERM") throw error;
      await copyFile(source, destination);
    }
  }

  appendLogs(entries: LogEntry[]) {
    return this.api.appendLogs(this.scope, entries);
  }

  authorize(deploymentId: string, apiKey: string) {
    return this.api.authorize(this.scope, deploymentId, apiKey);
  }

  pushMetrics(samples: MetricSample[]) {
    return this.api.pushMetrics(this.scope, samples);
  }
}
