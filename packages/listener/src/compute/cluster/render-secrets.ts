import type { V1EnvVar, V1Secret } from "@kubernetes/client-node";
import { DeployError, PLATFORM_WORKER_SLOTS } from "../types.js";
import { metadataOf } from "./render-labels.js";
import type { RenderContext } from "./render-spec.js";

/*
 * The deployment's two Secrets: its env (the deployment's secrets, the
 * platform's variables and the connection URLs), which the API and worker
 * pods read whole, and the credentials of its PostgreSQL and Redis.
 */

/** Keys of the credentials Secret. */
export const CREDENTIAL_KEYS = {
  dbPassword: "db-password",
  cachePassword: "cache-password",
  /** The database URL the KEDA operator connects with (from its own namespace: the Service's namespaced name). */
  scalerConnection: "scaler-connection",
} as const;

/** Variables the platform sets on the server containers; a secret reference of the same name is dropped. */
const PLATFORM_VARIABLES = ["BERTH_ROLE", "PORT", "DATABASE_URL", "DATABASE_URI", "REDIS_URL", "REDIS_URI"];

const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

/** How the servers reach their database and cache; both spellings, as Berth reads *_URL and the official image *_URI. */
export function connectionEnvOf(context: RenderContext): Record<string, string> {
  const { input, names } = context;
  const database =
    input.externalDatabaseUrl ?? `postgres://berth:${encodeURIComponent(input.passwords.db)}@${names.db}:5432/postgres`;
  const redis = `redis://:${encodeURIComponent(input.passwords.cache)}@${names.cache}:6379`;
  return { DATABASE_URL: database, DATABASE_URI: database, REDIS_URL: redis, REDIS_URI: redis };
}

/** The env Secret: the connection URLs win over a deployment secret of the same name, keys sorted for stable diffs. */
export function renderEnvSecret(context: RenderContext): V1Secret {
  const values: Record<string, string> = { ...context.input.env, ...connectionEnvOf(context) };
  for (const key of Object.keys(values)) {
    if (!SECRET_KEY.test(key)) throw new DeployError(`The variable name ${JSON.stringify(key)} cannot be a key of a Secret`);
  }
  const stringData = Object.fromEntries(
    Object.keys(values)
      .sort()
      .map((key) => [key, values[key]]),
  );
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: metadataOf(context, "api", context.names.env),
    type: "Opaque",
    stringData,
  };
}

export function renderCredentialsSecret(context: RenderContext): V1Secret {
  const { input, names } = context;
  const scaler =
    input.externalDatabaseUrl ??
    `postgres://berth:${encodeURIComponent(input.passwords.db)}@${names.db}.${input.namespace}.svc:5432/postgres?sslmode=disable`;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: metadataOf(context, "db", names.credentials),
    type: "Opaque",
    stringData: {
      ...(input.externalDatabaseUrl === undefined ? { [CREDENTIAL_KEYS.dbPassword]: input.passwords.db } : {}),
      [CREDENTIAL_KEYS.cachePassword]: input.passwords.cache,
      [CREDENTIAL_KEYS.scalerConnection]: scaler,
    },
  };
}

/**
 * The server container's inline env: its role and port (not secrets), then
 * the secret references, except those the deployment's own env or the
 * platform sets (an inline variable would override the env Secret's).
 */
export function serverEnvOf(context: RenderContext, role: "api" | "worker"): V1EnvVar[] {
  const { input } = context;
  const references = input.secretReferences.map((reference, index) => {
    const { name, secret_name, secret_key } = reference ?? {};
    if ([name, secret_name, secret_key].some((value) => typeof value !== "string" || value === ""))
      throw new DeployError(`secret_references[${index}] needs a name, a secret_name and a secret_key`);
    return reference;
  });
  const taken = new Set([...Object.keys(input.env), ...PLATFORM_VARIABLES]);
  const env: V1EnvVar[] = [
    { name: "BERTH_ROLE", value: role },
    { name: "PORT", value: "8000" },
  ];
  if (role === "worker" && !taken.has("BERTH_WORKERS")) {
    env.push({ name: "BERTH_WORKERS", value: String(PLATFORM_WORKER_SLOTS) });
    taken.add("BERTH_WORKERS");
  }
  for (const reference of references) {
    // The first reference of a name wins, as the deployment's own env does over all of them.
    if (taken.has(reference.name)) continue;
    taken.add(reference.name);
    env.push({ name: reference.name, valueFrom: { secretKeyRef: { name: reference.secret_name, key: reference.secret_key } } });
  }
  return env;
}
