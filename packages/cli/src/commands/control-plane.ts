import {
  apiKeyRecord,
  defaultDataDir,
  describeApiKey,
  generateApiKey,
  openControlPlaneState,
  readSettings,
  startControlPlane,
  type ControlPlaneSettings,
  type ControlPlaneStorage,
  type RepositoryRecord,
} from "@berth/control-plane";
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { closeOnSignals, parsedOrError, parsePort } from "../process.js";

const OPTIONS = {
  port: { type: "string", default: "8000" },
  host: { type: "string", default: "127.0.0.1" },
  "data-dir": { type: "string" },
  name: { type: "string" },
  tenant: { type: "string", multiple: true },
  "all-tenants": { type: "boolean" },
  repo: { type: "string", multiple: true },
  "router-port": { type: "string" },
  "no-listener": { type: "boolean" },
  "trust-all-code": { type: "boolean" },
} as const;

class UsageError extends Error {}

/** `berth control-plane [admin command]`. */
export async function controlPlaneCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() => parseArgs({ args: argv, allowPositionals: true, options: OPTIONS }));
  if (parsed instanceof Error) return fail(parsed.message);
  const { values, positionals } = parsed;
  const dataDir = values["data-dir"] ?? defaultDataDir();
  if (positionals.length === 0) {
    const settings: Partial<ControlPlaneSettings> = {};
    if (values["no-listener"]) settings.embeddedListener = false;
    if (values["trust-all-code"]) settings.trustAllCode = true;
    if (values["router-port"] !== undefined) {
      const routerPort = parsePort(values["router-port"]);
      if (routerPort === undefined) return fail("--router-port must be a port number");
      settings.routerPort = routerPort;
    }
    return serve(values.host, values.port, dataDir, settings);
  }

  const { storage } = await openControlPlaneState(dataDir, readSettings());
  try {
    const output = await admin(storage, positionals, values);
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return fail(error.message);
    throw error;
  } finally {
    await storage.close();
  }
}

async function serve(host: string, portText: string, dataDir: string, settings: Partial<ControlPlaneSettings>): Promise<number> {
  const port = parsePort(portText);
  if (port === undefined) return fail(`--port must be a port number, got "${portText}"`);
  try {
    closeOnSignals(await startControlPlane({ host, port, dataDir, settings }));
    return 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE")
      return fail(`${host}:${port} is already in use; choose another with --port`);
    throw error;
  }
}

type Values = { name?: string; tenant?: string[]; "all-tenants"?: boolean; repo?: string[] };

async function admin(storage: ControlPlaneStorage, [group, action, ...rest]: string[], values: Values): Promise<unknown> {
  const now = () => new Date().toISOString();
  const tenantIds = async () => {
    const ids = values.tenant ?? [];
    for (const id of ids) if (!(await storage.tenants.get(id))) throw new UsageError(`no workspace ${id}`);
    return ids;
  };
  switch (`${group} ${action}`) {
    case "tenants create": {
      if (!values.name) throw new UsageError("tenants create needs --name");
      const tenant = { id: randomUUID(), name: values.name, created_at: now() };
      await storage.tenants.create(tenant);
      return tenant;
    }
    case "tenants list":
      return storage.tenants.list();
    case "keys create": {
      const ids = await tenantIds();
      const all = values["all-tenants"] ?? false;
      if (all === ids.length > 0) throw new UsageError("keys create needs --tenant <id> (repeatable) or --all-tenants");
      const key = generateApiKey();
      const record = apiKeyRecord(key, { name: values.name ?? "api key", allTenants: all, tenantIds: ids });
      await storage.apiKeys.create(record);
      return { ...describeApiKey(record), key };
    }
    case "keys list":
      return (await storage.apiKeys.list()).map(describeApiKey);
    case "keys revoke": {
      if (!rest[0]) throw new UsageError("keys revoke needs the key id (see keys list)");
      const key = await storage.apiKeys.revoke(rest[0], now());
      if (!key) throw new UsageError(`no key ${rest[0]}`);
      return { id: key.id, revoked_at: key.revoked_at };
    }
    case "integrations add": {
      const [tenantId, ...more] = await tenantIds();
      if (!tenantId || more.length > 0) throw new UsageError("integrations add needs exactly one --tenant <id>");
      if (!values.name || !values.repo?.length)
        throw new UsageError("integrations add needs --name and at least one --repo <url>[#<branch>]");
      const integration = {
        id: randomUUID(),
        tenant_id: tenantId,
        name: values.name,
        provider: "repo_host" as const,
        installation_id: Math.floor(Date.now() / 1000),
        repos: values.repo.map(repository),
        created_at: now(),
        kind: "git" as const,
        base_url: null,
        credentials_ciphertext: null,
        webhook_secret_ciphertext: null,
      };
      await storage.integrations.create(integration);
      return integration;
    }
    case "integrations list": {
      const [tenantId] = await tenantIds();
      if (!tenantId) throw new UsageError("integrations list needs --tenant <id>");
      return storage.integrations.list(tenantId);
    }
    default:
      throw new UsageError(`unknown command "${[group, action].filter(Boolean).join(" ")}"`);
  }
}

function repository(spec: string, index: number): RepositoryRecord {
  const [url = "", branch = "main"] = spec.split("#");
  let path: string[];
  try {
    path = new URL(url).pathname
      .replace(/\.git$/, "")
      .split("/")
      .filter(Boolean);
  } catch {
    throw new UsageError(`--repo ${spec} is not a URL`);
  }
  if (path.length < 2) throw new UsageError(`--repo ${spec} should look like https://host/owner/name`);
  return { id: index + 1, owner: path[path.length - 2]!, name: path[path.length - 1]!, url, default_branch: branch };
}

function fail(message: string): number {
  process.stderr.write(`berth control-plane: ${message}\n`);
  return 2;
}
