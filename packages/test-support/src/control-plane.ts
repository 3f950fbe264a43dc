import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { randomBytes, randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { backendEnv } from "./backend.js";
import { fetchJson, type JsonResponse, readJsonResponse } from "./http.js";
import { BERTH_BIN, newDataDir } from "./paths.js";

// ---------------------------------------------------------------------------------------------------------------------
// Shapes the API answers (docs/control-plane.md)

export interface ValidationDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface ErrorBody {
  detail: string | ValidationDetail[];
}

export interface Secret {
  name: string;
  value: string;
}

export interface ResourceSpec {
  [field: string]: unknown;
}

export interface SourceConfig {
  integration_id?: string | null;
  repo_url?: string | null;
  deployment_type?: string | null;
  build_on_push?: boolean | null;
  custom_url?: string | null;
  resource_spec?: ResourceSpec | null;
  listener_id?: string | null;
  listener_config?: { cluster_namespace?: string | null } | null;
  install_command?: string | null;
  build_command?: string | null;
}

export interface SourceRevisionConfig {
  repo_ref?: string | null;
  graph_config_path?: string | null;
  image_uri?: string | null;
  source_tarball_path?: string | null;
  repo_commit_sha?: string | null;
}

export interface Deployment {
  id: string;
  tenant_id: string;
  name: string;
  source: string;
  source_config: SourceConfig;
  source_revision_config: SourceRevisionConfig;
  secrets: Secret[];
  secret_references: { name: string; secret_name: string; secret_key: string }[] | null;
  created_at: string;
  updated_at: string;
  status: string;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  image_version: string | null;
}

export interface Revision {
  id: string;
  deployment_id: string;
  status: string;
  status_message: string | null;
  source: string;
  source_revision_config: SourceRevisionConfig;
  image_digest: string | null;
  created_at: string;
  updated_at: string;
}

export interface Page<T> {
  resources: T[];
  offset: number | null;
}

export interface Listener {
  id: string;
  tenant_id: string;
  compute_type: string;
  compute_id: string;
  compute_config: { cluster_namespaces?: string[] | null } | null;
  version: string | null;
  created_at: string;
  updated_at: string;
}

export interface UploadUrl {
  upload_url: string;
  object_path: string;
  expires_at: string;
}

export interface Uploaded {
  object_path: string;
  size_bytes: number;
  sha256: string;
}

export interface BulkDeleteBody {
  results: { deployment_id: string; status: unknown; detail: unknown }[];
}

export interface Tenant {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKey {
  id: string;
  name: string | null;
  key: string;
  prefix: string;
  tenant_ids: string[];
  all_tenants: boolean;
  created_at: string;
}

export interface Integration {
  id: string;
  tenant_id: string;
  name: string;
  provider: string;
  installation_id: string;
  repos: { id: string; name: string; owner: string; url: string; default_branch: string }[];
  created_at: string;
}

// ---------------------------------------------------------------------------------------------------------------------
// HTTP

export type Response<T> = JsonResponse<T>;

export type Call = <T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Response<T>>;

export interface Api {
  call: Call;
  get<T = unknown>(path: string): Promise<Response<T>>;
  post<T = unknown>(path: string, body?: unknown): Promise<Response<T>>;
  patch<T = unknown>(path: string, body: unknown): Promise<Response<T>>;
  delete<T = unknown>(path: string): Promise<Response<T>>;
}

/** A client of the control plane at `base` with an API key and, optionally, a workspace (`X-Tenant-Id`). */
export function api(base: string, key?: string, tenant?: string): Api {
  const auth: Record<string, string> = {};
  if (key !== undefined) auth["X-Api-Key"] = key;
  if (tenant !== undefined) auth["X-Tenant-Id"] = tenant;
  const call: Call = (method, path, body, headers = {}) => fetchJson(`${base}${path}`, method, body, { ...auth, ...headers });
  return {
    call,
    get: (path) => call("GET", path),
    post: (path, body) => call("POST", path, body),
    patch: (path, body) => call("PATCH", path, body),
    delete: (path) => call("DELETE", path),
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Process

export interface ControlPlane {
  url: string;
  /** Base of the deployment URLs, when the embedded listener runs. */
  routerUrl?: string;
  adminKey: string;
  defaultTenantId: string;
  dataDir: string;
  /** The admin key on the default workspace. */
  admin: Api;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** The first line it printed that matches `pattern`, as soon as it is printed; rejects after `ms` without one. */
  outputLine(pattern: RegExp, ms: number): Promise<RegExpExecArray>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL (kill -9) and wait for exit. */
  kill(): Promise<void>;
  /** `berth control-plane <args> --data-dir <dir>` with the server's environment; resolves with the JSON it printed. */
  cli<T = unknown>(args: string[]): Promise<T>;
  createTenant(name: string): Promise<Tenant>;
  createKey(options: { tenants?: string[]; allTenants?: boolean; name?: string }): Promise<ApiKey>;
  revokeKey(id: string): Promise<{ id: string; revoked_at: string }>;
  addIntegration(tenant: string, name: string, repos: string[]): Promise<Integration>;
}

export interface ControlPlaneOptions {
  dataDir?: string;
  /** Run the embedded listener (builds and runs revisions); off by default. */
  listener?: boolean;
  /** Extra environment; `undefined` removes a variable (e.g. BERTH_ADMIN_API_KEY, to test the generated one). */
  env?: Record<string, string | undefined>;
  /** Reuse these on a restart (they are generated otherwise). */
  adminKey?: string;
  defaultTenantId?: string;
}

/** The URLs of the pino line `{"msg":"control plane listening","url":...,"router_url":...}`, once printed. */
function listeningUrl(text: string): { url: string; routerUrl?: string } | undefined {
  for (const line of text.split("\n")) {
    if (!line.includes("control plane listening")) continue;
    try {
      const entry = JSON.parse(line) as { msg?: string; url?: string; router_url?: string };
      if (entry.msg === "control plane listening" && entry.url) return { url: entry.url, routerUrl: entry.router_url };
    } catch {
      // a partial line: wait for the rest
    }
  }
  return undefined;
}

/** Starts `berth control-plane` on a free port and resolves once it listens. */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const dataDir = options.dataDir ?? newDataDir("berth-cp-test-");
  const adminKey = options.adminKey ?? `berth_test_admin_${randomBytes(16).toString("hex")}`;
  const defaultTenantId = options.defaultTenantId ?? randomUUID();
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOG_LEVEL: "info",
    ...(await backendEnv(dataDir)),
    BERTH_ADMIN_API_KEY: adminKey,
    BERTH_DEFAULT_TENANT_ID: defaultTenantId,
    // API tests watch revisions wait in QUEUED: no listener picks them up unless the test asks for one
    // (on a free router port: test files run side by side).
    BERTH_EMBEDDED_LISTENER: options.listener ? "1" : "0",
    BERTH_ROUTER_PORT: "0",
    ...options.env,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];

  const child: ChildProcess = spawn(
    process.execPath,
    [BERTH_BIN, "control-plane", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let text = "";
  const printed = new EventEmitter().setMaxListeners(0);
  const append = (chunk: Buffer) => {
    text += chunk.toString();
    printed.emit("data");
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  const outputLine = (pattern: RegExp, ms: number) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        for (const line of text.split("\n")) {
          const match = pattern.exec(line);
          if (match) {
            printed.off("data", check);
            clearTimeout(timer);
            resolve(match);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        printed.off("data", check);
        reject(new Error(`no line matched ${pattern}:\n${text.slice(-4000)}`));
      }, ms);
      printed.on("data", check);
      check();
    });
  const { url, routerUrl } = await new Promise<{ url: string; routerUrl?: string }>((resolve, reject) => {
    const onData = () => {
      const found = listeningUrl(text);
      if (found) {
        child.stdout!.off("data", onData);
        child.off("exit", onExit);
        resolve(found);
      }
    };
    const onExit = (code: number | null) => reject(new Error(`berth control-plane exited (${code}) before listening:\n${text}`));
    child.stdout!.on("data", onData);
    child.once("exit", onExit);
  });
  const exited = once(child, "exit");
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(name);
      await exited;
    }
  };

  const cli = async <T>(args: string[]): Promise<T> => {
    const run = spawn(process.execPath, [BERTH_BIN, "control-plane", ...args, "--data-dir", dataDir], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    run.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    run.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(run, "exit")) as [number | null];
    if (code !== 0) throw new Error(`berth control-plane ${args.join(" ")} exited ${code}:\n${stdout}\n${stderr}`);
    // One JSON object (or array) on stdout; tolerate log lines around it.
    const start = stdout.search(/^[[{]/m);
    try {
      return JSON.parse(stdout.slice(start === -1 ? 0 : start)) as T;
    } catch {
      throw new Error(`berth control-plane ${args.join(" ")} did not print JSON:\n${stdout}\n${stderr}`);
    }
  };

  return {
    url,
    routerUrl,
    adminKey,
    defaultTenantId,
    dataDir,
    admin: api(url, adminKey, defaultTenantId),
    output: () => text,
    outputLine,
    stop: () => signal("SIGTERM"),
    kill: () => signal("SIGKILL"),
    cli,
    createTenant: (name) => cli<Tenant>(["tenants", "create", "--name", name]),
    createKey: ({ tenants = [], allTenants = false, name }) =>
      cli<ApiKey>([
        "keys",
        "create",
        ...tenants.flatMap((id) => ["--tenant", id]),
        ...(allTenants ? ["--all-tenants"] : []),
        ...(name === undefined ? [] : ["--name", name]),
      ]),
    revokeKey: (id) => cli<{ id: string; revoked_at: string }>(["keys", "revoke", id]),
    addIntegration: (tenant, name, repos) =>
      cli<Integration>(["integrations", "add", "--tenant", tenant, "--name", name, ...repos.flatMap((r) => ["--repo", r])]),
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Request bodies and sources

let counter = 0;
/** A deployment name unique within the run (valid: letters, digits, `-`). */
export function uniqueName(prefix = "d"): string {
  counter += 1;
  return `${prefix}-${counter}-${randomBytes(3).toString("hex")}`;
}

export const IMAGE = "registry.local/agent:1";

export function externalImageBody(name: string, extra: { source_config?: SourceConfig; secrets?: Secret[] } = {}) {
  return {
    name,
    source: "external_image",
    source_config: extra.source_config ?? {},
    source_revision_config: { image_uri: IMAGE },
    secrets: extra.secrets ?? [{ name: "OPENAI_API_KEY", value: "sk-1" }],
  };
}

export function internalSourceBody(name: string) {
  return {
    name,
    source: "internal_source",
    source_config: {},
    source_revision_config: { graph_config_path: "langgraph.json" },
    secrets: [],
  };
}

export function internalImageBody(name: string, imageUri: string | null = IMAGE) {
  return {
    name,
    source: "internal_image",
    source_config: {},
    source_revision_config: imageUri === null ? {} : { image_uri: imageUri },
    secrets: [],
  };
}

export function repoHostBody(name: string, integrationId: string, repoUrl: string, extra: SourceConfig = {}) {
  return {
    name,
    source: "repo_host",
    source_config: { integration_id: integrationId, repo_url: repoUrl, ...extra },
    source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
    secrets: [],
  };
}

/** A ustar archive of the given files, gzipped: a real source tarball. */
export function makeTarball(
  files: Record<string, string> = { "langgraph.json": '{"graphs":{"agent":"./agent.ts:graph"}}' },
): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.from(content);
    const header = Buffer.alloc(512);
    header.write(name, 0, 100, "utf8");
    header.write("0000644\0", 100, "ascii");
    header.write("0000000\0", 108, "ascii");
    header.write("0000000\0", 116, "ascii");
    header.write(`${data.length.toString(8).padStart(11, "0")}\0`, 124, "ascii");
    header.write(
      `${Math.floor(Date.now() / 1000)
        .toString(8)
        .padStart(11, "0")}\0`,
      136,
      "ascii",
    );
    header.write("        ", 148, "ascii");
    header.write("0", 156, "ascii");
    header.write("ustar\0", 257, "ascii");
    header.write("00", 263, "ascii");
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** PUT bytes to an upload URL (no API key). */
export async function put<T = unknown>(uploadUrl: string, bytes: Buffer, contentType = "application/gzip"): Promise<Response<T>> {
  return readJsonResponse<T>(
    await fetch(uploadUrl, { method: "PUT", body: new Uint8Array(bytes), headers: { "content-type": contentType } }),
  );
}

/** upload-url + PUT of a tarball for an internal_source deployment; resolves with the object path. */
export async function uploadSource(client: Api, deploymentId: string, bytes: Buffer = makeTarball()): Promise<string> {
  const issued = await client.post<UploadUrl>(`/v2/deployments/${deploymentId}/upload-url`);
  if (issued.status !== 200) throw new Error(`upload-url answered ${issued.status}: ${JSON.stringify(issued.body)}`);
  const uploaded = await put<Uploaded>(issued.body.upload_url, bytes);
  if (uploaded.status !== 200) throw new Error(`upload PUT answered ${uploaded.status}: ${JSON.stringify(uploaded.body)}`);
  return issued.body.object_path;
}

/** Creates a deployment and fails loudly unless it is a 201. */
export async function createDeployment(client: Api, body: unknown): Promise<Deployment> {
  const response = await client.post<Deployment>("/v2/deployments", body);
  if (response.status !== 201) throw new Error(`create answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Every revision of a deployment, newest first. */
export async function revisionsOf(client: Api, deploymentId: string): Promise<Revision[]> {
  const response = await client.get<Page<Revision>>(`/v2/deployments/${deploymentId}/revisions?limit=100`);
  if (response.status !== 200) throw new Error(`revisions answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.resources;
}

// ---------------------------------------------------------------------------------------------------------------------
// Assertions on error answers

export type DetailMatcher = string | RegExp | RegExp[];

/** A `{detail: "..."}` answer with this status; the detail equals the string or matches every RegExp. */
export function assertError(response: Response<unknown>, status: number, detail: DetailMatcher): void {
  const shown = JSON.stringify(response.body);
  assert.equal(response.status, status, `expected ${status}, got ${response.status}: ${shown}`);
  const body = response.body as ErrorBody;
  assert.equal(typeof body?.detail, "string", `detail is not a string: ${shown}`);
  const text = body.detail as string;
  if (typeof detail === "string") assert.equal(text, detail);
  else for (const pattern of Array.isArray(detail) ? detail : [detail]) assert.match(text, pattern);
}

/** A 422 whose detail is a list of `{loc, msg, type}`, the first one at `loc` (or starting with it, when `prefix`). */
export function assertValidationError(response: Response<unknown>, loc: (string | number)[], prefix = false): void {
  const shown = JSON.stringify(response.body);
  assert.equal(response.status, 422, `expected 422, got ${response.status}: ${shown}`);
  const detail = (response.body as ErrorBody).detail;
  assert.ok(Array.isArray(detail) && detail.length > 0, `detail is not a non-empty list: ${shown}`);
  for (const entry of detail) {
    assert.ok(Array.isArray(entry.loc), `loc is not a list: ${shown}`);
    assert.ok(
      entry.loc.every((part) => typeof part === "string" || typeof part === "number"),
      shown,
    );
    assert.equal(typeof entry.msg, "string", shown);
    assert.equal(typeof entry.type, "string", shown);
  }
  const first = detail[0].loc;
  assert.deepEqual(prefix ? first.slice(0, loc.length) : first, loc, `first loc ${JSON.stringify(first)}: ${shown}`);
}
