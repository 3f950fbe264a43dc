import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream } from "node:stream/web";
import type { RevisionStatus } from "@berth/listener-protocol";
import type {
  Assignment,
  Authorization,
  DeploymentReport,
  LogEntry,
  MetricSample,
  RevisionEventInput,
  RevisionFacts,
} from "@berth/listener-protocol";
import type { ControlPlaneLink } from "./link.js";

export interface HttpLinkOptions {
  /** The control plane's base URL, e.g. http://cp:8000 (or …/api-host). */
  controlPlaneUrl: string;
  apiKey: string;
  listenerId: string;
  /** X-Tenant-Id, for keys that reach several workspaces. */
  tenantId?: string;
  timeoutMs?: number;
}

export class ControlPlaneError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * `berth listener`'s link: the listener protocol over HTTP. Authorizations
 * are remembered, so the router keeps admitting known keys while the control
 * plane is unreachable (deployments keep serving through an outage).
 */
export class HttpLink implements ControlPlaneLink {
  private readonly base: string;
  private readonly lastVerdicts = new Map<string, Authorization>();

  constructor(private readonly options: HttpLinkOptions) {
    this.base = `${options.controlPlaneUrl.replace(/\/+$/, "")}/v2/listeners/${options.listenerId}`;
  }

  tracingEndpoint(): string {
    return `${this.options.controlPlaneUrl.replace(/\/+$/, "")}/api/v1`;
  }

  /** The listener's compute_type, as registered with the control plane (POST /v2/listeners). */
  async computeType(): Promise<string> {
    return ((await this.call("GET", "")) as { compute_type: string }).compute_type;
  }

  async assignments(): Promise<Assignment[]> {
    return ((await this.call("GET", "/assignments")) as { resources: Assignment[] }).resources;
  }

  async transition(
    revisionId: string,
    from: readonly RevisionStatus[],
    to: RevisionStatus,
    message: string,
    report?: DeploymentReport,
    facts?: RevisionFacts,
  ): Promise<boolean> {
    const body = { from, to, message, ...(report ? { report } : {}), ...(facts ? { facts } : {}) };
    const result = (await this.call("POST", `/revisions/${revisionId}/transition`, body)) as { transitioned: boolean };
    return result.transitioned;
  }

  async report(deploymentId: string, report: DeploymentReport): Promise<void> {
    await this.call("POST", `/deployments/${deploymentId}/report`, report);
  }

  async recordEvent(revisionId: string, event: RevisionEventInput): Promise<void> {
    await this.call("POST", `/revisions/${revisionId}/events`, event);
  }

  async branchMoved(deploymentId: string, head: string): Promise<void> {
    await this.call("POST", `/deployments/${deploymentId}/branch-moved`, { head });
  }

  async purge(deploymentId: string): Promise<void> {
    await this.call("POST", `/deployments/${deploymentId}/purge`);
  }

  async fetchSource(revisionId: string, destination: string): Promise<void> {
    const response = await this.fetch("GET", `/revisions/${revisionId}/source`);
    if (!response.body) throw new ControlPlaneError(`the source of revision ${revisionId} came back empty`);
    await pipeline(Readable.fromWeb(response.body as ReadableStream<Uint8Array>), createWriteStream(destination));
  }

  async appendLogs(entries: LogEntry[]): Promise<void> {
    await this.call("POST", "/logs", { entries });
  }

  async pushMetrics(samples: MetricSample[]): Promise<void> {
    await this.call("POST", "/metrics", { samples });
  }

  async authorize(deploymentId: string, apiKey: string): Promise<Authorization> {
    const remembered = `${deploymentId}\u0000${apiKey}`;
    try {
      const { result } = (await this.call("POST", "/authorize", { deployment_id: deploymentId, api_key: apiKey })) as {
        result: Authorization;
      };
      this.lastVerdicts.set(remembered, result);
      return result;
    } catch (error) {
      const last = this.lastVerdicts.get(remembered);
      if (last && !(error instanceof ControlPlaneError && error.status !== undefined)) return last;
      throw error;
    }
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await this.fetch(method, path, body);
    return response.status === 204 ? undefined : response.json();
  }

  private async fetch(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { "x-api-key": this.options.apiKey, accept: "application/json" };
    if (this.options.tenantId) headers["x-tenant-id"] = this.options.tenantId;
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      throw new ControlPlaneError(`${method} ${path}: the control plane is unreachable (${(error as Error).message})`);
    }
    if (!response.ok) {
      throw new ControlPlaneError(
        `${method} ${path} failed with status ${response.status}: ${await response.text()}`,
        response.status,
      );
    }
    return response;
  }
}
