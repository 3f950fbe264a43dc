import { copyFile, link, rm } from "node:fs/promises";
import type { RevisionStatus } from "@berth/listener-protocol";
import type { ListenerApi, ListenerScope } from "./services/listener-api.js";
import type { DeploymentReport, LogEntry, RevisionEventInput, RevisionFacts } from "@berth/listener-protocol";
import type { ControlPlaneLink } from "@berth/listener";

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
}
