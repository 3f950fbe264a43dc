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
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
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
  };
}
