/** The control plane's settings, from the environment (see the README's configuration table). */
export interface ControlPlaneSettings {
  databaseUrl?: string;
  pgPoolSize: number;
  adminApiKey?: string;
  defaultTenantId?: string;
  secretsKey?: string;
  publicUrl?: string;
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
  listenerPollMs: number;
  drainTimeoutMs: number;
  /** Tracing: lifetime of a feedback token whose request names none. */
  feedbackTokenTtlSeconds: number;
  /** The embedded listener runs every workspace's code even when it cannot sandbox it (docs/security.md). */
  trustAllCode: boolean;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/** `1`, `true`, `yes` (any case). */
export function isTrue(value: string | undefined): boolean {
  return ["1", "true", "yes"].includes((value ?? "").toLowerCase());
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): ControlPlaneSettings {
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    pgPoolSize: integer(env, "BERTH_PG_POOL_SIZE", 10, 1),
    adminApiKey: env.BERTH_ADMIN_API_KEY || undefined,
    defaultTenantId: env.BERTH_DEFAULT_TENANT_ID || undefined,
    secretsKey: env.BERTH_SECRETS_KEY || undefined,
    publicUrl: env.BERTH_CONTROL_PLANE_URL || undefined,
    uploadTtlSeconds: integer(env, "BERTH_UPLOAD_URL_TTL_SECONDS", 900, 0),
    uploadMaxBytes: integer(env, "BERTH_UPLOAD_MAX_BYTES", 200 * 1024 * 1024, 1),
    embeddedListener: !["0", "false", "no"].includes((env.BERTH_EMBEDDED_LISTENER ?? "").toLowerCase()),
    routerHost: env.BERTH_ROUTER_HOST || undefined,
    routerPort: integer(env, "BERTH_ROUTER_PORT", 8080, 0),
    routerPublicUrl: env.BERTH_ROUTER_PUBLIC_URL || undefined,
    routerAuthCacheMs: integer(env, "BERTH_ROUTER_AUTH_CACHE_SECONDS", 5, 0) * 1000,
    listenerPollMs: integer(env, "BERTH_LISTENER_POLL_MS", 1000, 10),
    drainTimeoutMs: integer(env, "BERTH_DRAIN_TIMEOUT_SECONDS", 60, 0) * 1000,
    feedbackTokenTtlSeconds: integer(env, "BERTH_FEEDBACK_TOKEN_TTL_SECONDS", 86400, 0), // tracing
    trustAllCode: isTrue(env.BERTH_TRUST_ALL_CODE),
  };
}
