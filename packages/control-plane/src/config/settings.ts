import { EnvError, envBoolean, envNumber, envOneOf } from "@berth/service-kit";
import { isIP } from "node:net";
import { isAbsolute } from "node:path";

/** The control plane's settings, from the environment (see the README's configuration table). */
export interface ControlPlaneSettings {
  databaseUrl?: string;
  pgPoolSize: number;
  adminApiKey?: string;
  defaultTenantId?: string;
  secretsKey?: string;
  publicUrl?: string;
  /** A dashboard build to serve instead of packages/dashboard/dist (a build of one's own, or one under test). */
  dashboardDir?: string;
  uploadTtlSeconds: number;
  uploadMaxBytes: number;
  /** Run the embedded listener (local compute) in this process. */
  embeddedListener: boolean;
  routerHost?: string;
  routerPort: number;
  /** Base of deployment URLs when clients reach the router by another address (a public host, a TLS terminator). */
  routerPublicUrl?: string;
  /** How long the router trusts an API key verdict. */
  routerAuthCacheMs: number;
  /** The routers of separate `berth listener` processes: the dashboard opens their deployments (docs/dashboard.md). */
  listenerRouterUrls: string[];
  listenerPollMs: number;
  drainTimeoutMs: number;
  /** Tracing: lifetime of a feedback token whose request names none. */
  feedbackTokenTtlSeconds: number;
  /** How long the deployments' metric samples are kept. */
  metricsRetentionSeconds: number;
  /** How long an Auth Service consent link works. */
  authFlowSeconds: number;
  /** The private addresses OAuth provider and MCP discovery requests may reach (docs/auth-service.md). */
  outboundAllowPrivate: { all: boolean; hosts: string[]; networks: string[] };
  /** The embedded listener runs every workspace's code even when it cannot sandbox it (docs/security.md). */
  trustAllCode: boolean;
  /** Destinations the embedded listener's sandboxes may reach besides the internet (docs/security.md). */
  sandboxEgressAllow?: string;
  /** Where the embedded listener runs revisions: local processes or containers (docs/containers.md). */
  listenerCompute: "local" | "docker";
  /** The Docker Engine API of a docker listener (else DOCKER_HOST, else the standard socket). */
  containerEngine?: string;
  /** Host folders hostPath volumes of containers may bind (docs/containers.md). */
  containerBindAllow: string[];
  /** The embedded listener's secret source (docs/containers.md). */
  listenerSecretsFile?: string;
  /** Run the platform's image registry on this port of 127.0.0.1 (push tokens, internal_image; docs/containers.md). */
  registryPort?: number;
  /** The registry's address as pushers and engines reach it (default 127.0.0.1:<registryPort>). */
  registryAddress?: string;
  pushTokenTtlSeconds: number;
  /**
   * Folders under which the operator may create `local` git integrations
   * (absolute paths; none by default: then no API key may create one).
   */
  localGitRoots: string[];
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): ControlPlaneSettings {
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    pgPoolSize: envNumber("BERTH_PG_POOL_SIZE", 10, { min: 1, integer: true }, env),
    adminApiKey: env.BERTH_ADMIN_API_KEY || undefined,
    defaultTenantId: env.BERTH_DEFAULT_TENANT_ID || undefined,
    secretsKey: env.BERTH_SECRETS_KEY || undefined,
    publicUrl: env.BERTH_CONTROL_PLANE_URL || undefined,
    dashboardDir: env.BERTH_DASHBOARD_DIR || undefined,
    uploadTtlSeconds: envNumber("BERTH_UPLOAD_URL_TTL_SECONDS", 900, { min: 0, integer: true }, env),
    uploadMaxBytes: envNumber("BERTH_UPLOAD_MAX_BYTES", 200 * 1024 * 1024, { min: 1, integer: true }, env),
    embeddedListener: envBoolean("BERTH_EMBEDDED_LISTENER", true, env),
    routerHost: env.BERTH_ROUTER_HOST || undefined,
    routerPort: envNumber("BERTH_ROUTER_PORT", 8080, { min: 0, max: 65535, integer: true }, env),
    routerPublicUrl: env.BERTH_ROUTER_PUBLIC_URL || undefined,
    routerAuthCacheMs: envNumber("BERTH_ROUTER_AUTH_CACHE_SECONDS", 5, { min: 0, integer: true }, env) * 1000,
    listenerRouterUrls: (env.BERTH_LISTENER_ROUTER_URLS ?? "")
      .split(",")
      .map((url) => url.trim())
      .filter(Boolean),
    listenerPollMs: envNumber("BERTH_LISTENER_POLL_MS", 1000, { min: 10, integer: true }, env),
    drainTimeoutMs: envNumber("BERTH_DRAIN_TIMEOUT_SECONDS", 60, { min: 0, integer: true }, env) * 1000,
    feedbackTokenTtlSeconds: envNumber("BERTH_FEEDBACK_TOKEN_TTL_SECONDS", 86400, { min: 0, integer: true }, env), // tracing
    metricsRetentionSeconds: envNumber("BERTH_METRICS_RETENTION_SECONDS", 2 * 86400, { min: 60, integer: true }, env),
    authFlowSeconds: envNumber("BERTH_AUTH_FLOW_SECONDS", 600, { min: 1, integer: true }, env),
    outboundAllowPrivate: outboundAllowance(env),
    trustAllCode: envBoolean("BERTH_TRUST_ALL_CODE", false, env),
    sandboxEgressAllow: env.BERTH_SANDBOX_EGRESS_ALLOW || undefined,
    listenerCompute: envOneOf("BERTH_LISTENER_COMPUTE", ["local", "docker"] as const, "local", env),
    containerEngine: env.BERTH_CONTAINER_ENGINE || undefined,
    listenerSecretsFile: env.BERTH_LISTENER_SECRETS_FILE || undefined,
    containerBindAllow: (env.BERTH_CONTAINER_BIND_ALLOW ?? "")
      .split(",")
      .map((folder) => folder.trim())
      .filter(Boolean),
    registryPort: env.BERTH_REGISTRY_PORT
      ? envNumber("BERTH_REGISTRY_PORT", 0, { min: 1, max: 65535, integer: true }, env)
      : undefined,
    registryAddress: env.BERTH_REGISTRY_ADDRESS || undefined,
    pushTokenTtlSeconds: envNumber("BERTH_PUSH_TOKEN_TTL_SECONDS", 900, { min: 1, integer: true }, env),
    localGitRoots: absoluteFolders("BERTH_LOCAL_GIT_ROOTS", env),
  };
}

/** A comma-separated list of absolute folders; a relative one stops the start (it would depend on the working directory). */
function absoluteFolders(name: string, env: NodeJS.ProcessEnv): string[] {
  const folders = (env[name] ?? "")
    .split(",")
    .map((folder) => folder.trim())
    .filter(Boolean);
  for (const folder of folders) {
    if (!isAbsolute(folder)) throw new EnvError(`${name}: ${folder} is not an absolute path`);
  }
  return folders;
}

/**
 * BERTH_OUTBOUND_ALLOW_PRIVATE: `1`/`true` allows every address; else a
 * comma-separated list of host names, IP addresses and CIDRs (`10.0.0.0/8`).
 * Unset, empty, `0` or `false`: public addresses only.
 */
function outboundAllowance(env: NodeJS.ProcessEnv): { all: boolean; hosts: string[]; networks: string[] } {
  const name = "BERTH_OUTBOUND_ALLOW_PRIVATE";
  const value = (env[name] ?? "").trim();
  if (/^(1|true)$/i.test(value)) return { all: true, hosts: [], networks: [] };
  const allowance = { all: false, hosts: [] as string[], networks: [] as string[] };
  if (/^(0|false)?$/i.test(value)) return allowance;
  const entries = value.split(",").map((item) => item.trim().toLowerCase());
  for (const entry of entries.filter(Boolean)) {
    const [address = "", prefix, ...rest] = entry.split("/");
    const family = isIP(address);
    if (prefix === undefined && family === 0) {
      if (!/^[a-z0-9.-]+$/.test(entry)) throw new EnvError(`${name}: ${entry} is neither a host name, an address nor a CIDR`);
      allowance.hosts.push(entry);
      continue;
    }
    const bits = prefix === undefined ? (family === 4 ? 32 : 128) : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    if (family === 0 || rest.length > 0 || !(bits >= 0 && bits <= (family === 4 ? 32 : 128))) {
      throw new EnvError(`${name}: ${entry} is not a valid address or CIDR`);
    }
    allowance.networks.push(entry);
  }
  return allowance;
}
