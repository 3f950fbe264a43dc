// `berth control-plane` started for a test, and its own commands (tenants, keys, integrations) run beside it.
import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { randomBytes, randomUUID } from "node:crypto";
import { type Api, api } from "./api-client.js";
import type { ApiKey, Integration, Tenant } from "./api-types.js";
import { backendEnv } from "./backend.js";
import { runBerth } from "./commands.js";
import { BERTH_BIN, newDataDir } from "./paths.js";

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
  /** The `berth` script to run (default: this checkout's), e.g. one installed from the packed tarballs. */
  bin?: string;
  /** Working directory (default: the test's). */
  cwd?: string;
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
    [options.bin ?? BERTH_BIN, "control-plane", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir],
    { env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] },
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
    const { code, stdout, stderr } = await runBerth(["control-plane", ...args, "--data-dir", dataDir], {
      env,
      cwd: options.cwd,
      bin: options.bin,
    });
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
