import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Deployment, LogLine, Page } from "@berth/control-plane/wire";
import { connectionFromEnv } from "../settings.js";
import { readSavedLogin } from "./config-file.js";

/** The control plane's answers, typed by its own schemas. */
export type { Deployment, LogLine, Page, Revision } from "@berth/control-plane/wire";

export type LogKind = "build" | "deploy";

export const DEFAULT_URL = "http://127.0.0.1:8000";

/** The parseArgs options every remote command takes. */
export const CONNECTION_OPTIONS = {
  url: { type: "string" },
  "api-key": { type: "string" },
  tenant: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export interface ConnectionFlags {
  url?: string;
  "api-key"?: string;
  tenant?: string;
}

/** `npm start` keeps its admin key here: the quick start then needs no flags. */
function localAdminKey(): string | undefined {
  const file = join(process.cwd(), ".berth", "control-plane", "admin.key");
  return existsSync(file) ? readFileSync(file, "utf8").trim() || undefined : undefined;
}

/** An answer other than the documented success, with the control plane's `detail`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    message = detail,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

function detailOf(text: string): string {
  try {
    const body = JSON.parse(text) as { detail?: unknown };
    if (typeof body.detail === "string") return body.detail;
    if (body.detail !== undefined) return JSON.stringify(body.detail);
  } catch {
    // not JSON: the text itself says what went wrong
  }
  return text;
}

export function withoutSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where the commands talk, and as whom. */
export interface Connection {
  url: string;
  apiKey?: string;
  tenant?: string;
}

/** Each setting from the flags, else the environment, else `berth login`'s file, else the defaults. */
function resolveConnection(flags: ConnectionFlags): Connection {
  const fromEnv = connectionFromEnv();
  const asked = flags.url ?? fromEnv.url;
  const saved = readSavedLogin();
  // The saved key goes only to the control plane it was saved for, never to another URL given by flag or environment.
  const login = saved && (asked === undefined || withoutSlash(asked) === withoutSlash(saved.url)) ? saved : undefined;
  return {
    url: withoutSlash(asked ?? login?.url ?? DEFAULT_URL),
    apiKey: flags["api-key"] ?? fromEnv.apiKey ?? (login?.api_key || localAdminKey()),
    tenant: flags.tenant ?? fromEnv.tenantId ?? (login?.tenant_id || undefined),
  };
}

/** A client connected as the flags, environment and config file say (resolveConnection). */
export function connect(flags: ConnectionFlags): ControlPlaneClient {
  return new ControlPlaneClient(resolveConnection(flags));
}

/** A client of the `/v2/deployments` API and the log endpoints. */
export class ControlPlaneClient {
  readonly url: string;
  private readonly headers: Record<string, string>;

  constructor({ url, apiKey, tenant }: Connection) {
    this.url = withoutSlash(url);
    this.headers = { accept: "application/json" };
    if (apiKey) this.headers["x-api-key"] = apiKey;
    if (tenant) this.headers["x-tenant-id"] = tenant;
  }

  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const headers = body === undefined ? this.headers : { ...this.headers, "content-type": "application/json" };
    let response: Response;
    try {
      response = await fetch(this.url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new Error(`cannot reach the control plane at ${this.url}: ${(error as Error).cause ?? error}`);
    }
    const text = await response.text();
    if (!response.ok) {
      const detail = detailOf(text);
      throw new ApiError(response.status, detail, `${method} ${path}: ${response.status} ${detail}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A deployment by id, or by exact name (names are unique in a workspace). */
  async deployment(ref: string): Promise<Deployment> {
    if (UUID.test(ref)) return this.request<Deployment>("GET", `/v2/deployments/${ref}`);
    const found = await this.findByName(ref);
    if (!found) throw new ApiError(404, `no deployment named "${ref}"`);
    return found;
  }

  async findByName(name: string): Promise<Deployment | undefined> {
    const page = await this.request<Page<Deployment>>(
      "GET",
      `/v2/deployments?limit=100&name_contains=${encodeURIComponent(name)}`,
    );
    return page.resources.find((deployment) => deployment.name === name);
  }

  /** Log lines after the first `offset` ones, oldest first (ids grow: lines only get appended). */
  logs(deploymentId: string, revisionId: string | undefined, kind: LogKind, offset: number, signal?: AbortSignal) {
    const path =
      revisionId === undefined
        ? `/v1/projects/${deploymentId}/${kind}_logs`
        : `/v1/projects/${deploymentId}/revisions/${revisionId}/${kind}_logs`;
    return this.request<{ logs: LogLine[] }>("POST", path, { order: "asc", limit: 1000, offset }, signal).then(
      (page) => page.logs,
    );
  }

  /** Every log line so far, oldest first. */
  async allLogs(deploymentId: string, revisionId: string | undefined, kind: LogKind): Promise<LogLine[]> {
    const lines: LogLine[] = [];
    for (;;) {
      const page = await this.logs(deploymentId, revisionId, kind, lines.length);
      lines.push(...page);
      if (page.length < 1000) return lines;
    }
  }
}
