import {
  apiKeyRecord,
  defaultDataDir,
  describeApiKey,
  generateApiKey,
  integrationAdmin,
  openControlPlaneState,
  readSettings,
  startControlPlane,
  type ControlPlaneSettings,
  type ControlPlaneStorage,
  type RevisionEvent,
} from "@berth/control-plane";
import { BadRequestError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { closeOnSignals, parsedOrError, parsePort } from "../process.js";
import { credentialsFromFiles, UsageError } from "./integration-credentials.js";
import { revisionLine } from "./revision-lines.js";

const OPTIONS = {
  port: { type: "string", default: "8000" },
  host: { type: "string", default: "127.0.0.1" },
  "data-dir": { type: "string" },
  name: { type: "string" },
  tenant: { type: "string", multiple: true },
  "all-tenants": { type: "boolean" },
  repo: { type: "string", multiple: true },
  kind: { type: "string" },
  "base-url": { type: "string" },
  "token-file": { type: "string" },
  "ssh-key-file": { type: "string" },
  "known-hosts-file": { type: "string" },
  "router-port": { type: "string" },
  "no-listener": { type: "boolean" },
  "trust-all-code": { type: "boolean" },
} as const;

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

  const settings = readSettings();
  const { storage, box } = await openControlPlaneState(dataDir, settings);
  try {
    const output = await admin(storage, integrationAdmin(storage, box, settings.localGitRoots), positionals, values);
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    return 0;
  } catch (error) {
    // The service's refusals (a folder outside BERTH_LOCAL_GIT_ROOTS…) are the operator's to fix, not a crash.
    if (error instanceof UsageError || error instanceof BadRequestError) return fail(error.message);
    throw error;
  } finally {
    await storage.close();
  }
}

async function serve(host: string, portText: string, dataDir: string, settings: Partial<ControlPlaneSettings>): Promise<number> {
  const port = parsePort(portText);
  if (port === undefined) return fail(`--port must be a port number, got "${portText}"`);
  try {
    // One human line per revision step on stderr; stdout keeps the JSON logs (which do not repeat these steps).
    const onRevisionEvent = (event: RevisionEvent) => {
      const line = revisionLine(event);
      if (line) process.stderr.write(`${line}\n`);
    };
    closeOnSignals(await startControlPlane({ host, port, dataDir, settings, onRevisionEvent }));
    return 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE")
      return fail(`${host}:${port} is already in use; choose another with --port`);
    throw error;
  }
}

type Values = {
  name?: string;
  tenant?: string[];
  "all-tenants"?: boolean;
  repo?: string[];
  kind?: string;
  "base-url"?: string;
  "token-file"?: string;
  "ssh-key-file"?: string;
  "known-hosts-file"?: string;
};

const INTEGRATION_KINDS = ["git", "github", "gitlab", "gitea", "local"] as const;

async function admin(
  storage: ControlPlaneStorage,
  integrations: ReturnType<typeof integrationAdmin>,
  [group, action, ...rest]: string[],
  values: Values,
): Promise<unknown> {
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
      if (!values.name) throw new UsageError("integrations add needs --name");
      const kind = values.kind ?? "git";
      if (!(INTEGRATION_KINDS as readonly string[]).includes(kind))
        throw new UsageError(`--kind must be one of ${INTEGRATION_KINDS.join(", ")}`);
      const created = await integrations.create(tenantId, {
        name: values.name,
        kind: kind as (typeof INTEGRATION_KINDS)[number],
        base_url: values["base-url"],
        credentials: credentialsFromFiles(values),
        repos: values.repo ?? [],
      });
      const repos = (await integrations.repos(tenantId, created.id)).map(({ host_integration_id: _, ...repo }) => repo);
      return { ...created, tenant_id: tenantId, repos };
    }
    case "integrations list": {
      const [tenantId] = await tenantIds();
      if (!tenantId) throw new UsageError("integrations list needs --tenant <id>");
      return integrations.list(tenantId);
    }
    default:
      throw new UsageError(`unknown command "${[group, action].filter(Boolean).join(" ")}"`);
  }
}

function fail(message: string): number {
  process.stderr.write(`berth control-plane: ${message}\n`);
  return 2;
}
