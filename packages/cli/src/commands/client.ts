import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Deployment, LogLine, Page } from "@berth/control-plane/wire";
import { connectionFromEnv } from "../settings.js";
import { fieldErrorLines, type SettingSource, unauthorizedMessage, unreachableMessage } from "./api-errors.js";
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

/** The answer's `detail` as text, and a 422's field errors one sentence each. */
function detailOf(text: string): { detail: string; fields?: string[] } {
  try {
    const body = JSON.parse(text) as { detail?: unknown };
    if (typeof body.detail === "string") return { detail: body.detail };
    const fields = fieldErrorLines(body.detail);
    if (fields) return { detail: fields.join(" "), fields };
    if (body.detail !== undefined) return { detail: JSON.stringify(body.detail) };
  } catch {
    // not JSON: the text itself says what went wrong
  }
  return { detail: text };
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
  /** Where the URL and the key came from, for the messages of a refused key or an unreachable URL. */
  urlSource?: SettingSource;
  keySource?: SettingSource;
}

/** Each setting from the flags, else the environment, else `berth login`'s file, else the defaults. */
function resolveConnection(flags: ConnectionFlags): Connection {
  const fromEnv = connectionFromEnv();
  const asked = flags.url ?? fromEnv.url;
  const saved = readSavedLogin();
  // The saved key goes only to the control plane it was saved for, never to another URL given by flag or environment.
  const login = saved && (asked === undefined || withoutSlash(asked) === withoutSlash(saved.url)) ? saved : undefined;
  const keys: [SettingSource, string | undefined][] = [
    ["flag", flags["api-key"]],
    ["environment", fromEnv.apiKey],
    ["login", login?.api_key || undefined],
  ];
  let key = keys.find(([, value]) => value !== undefined);
  if (!key) {
    const adminKey = localAdminKey();
    if (adminKey) key = ["admin-key-file", adminKey];
  }
  return {
    url: withoutSlash(asked ?? login?.url ?? DEFAULT_URL),
    apiKey: key?.[1],
    tenant: flags.tenant ?? fromEnv.tenantId ?? (login?.tenant_id || undefined),
    urlSource: flags.url !== undefined ? "flag" : fromEnv.url !== undefined ? "environment" : login ? "login" : "default",
    keySource: key?.[0],
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
  private readonly urlSource: SettingSource;
  private readonly keySource: SettingSource | undefined;

  constructor({ url, apiKey, tenant, urlSource, keySource }: Connection) {
    this.url = withoutSlash(url);
    this.urlSource = urlSource ?? "flag";
    this.keySource = apiKey ? (keySource ?? "flag") : undefined;
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
      throw new Error(unreachableMessage(this.url, (error as Error).cause ?? error, this.urlSource));
    }
    const text = await response.text();
    if (!response.ok) {
      const { detail, fields } = detailOf(text);
      const { status } = response;
      if (status === 401) throw new ApiError(status, detail, unauthorizedMessage(this.url, detail, this.keySource));
      if (fields) {
        const lines = fields.map((line) => `\n  ${line}`).join("");
        throw new ApiError(status, detail, `${method} ${path}: the control plane refused the request (${status}):${lines}`);
      }
      throw new ApiError(status, detail, `${method} ${path}: ${status} ${detail}`);
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
