import { envBoolean, envNumber, envOneOf } from "@berth/service-kit";
import type { TracingSettings } from "../tracing/settings.js";

/** Server settings from the environment, with their defaults (documented in the README). */
export interface ServerSettings {
  /**
   * Runs executing at once in one process. Graphs mostly await models, so a
   * run costs a slot, not a core: the default is sized for I/O-bound runs.
   */
  workers: number;
  /** A run taking longer ends as `timeout`; 0 disables the limit. */
  runTimeoutMs: number;
  /** A run is retried after a crash at most this many times in all. */
  maxAttempts: number;
  /**
   * How long a claimed run stays owned without a renewal (renewed every third
   * of it): a run of a worker that died on another host resumes elsewhere
   * within this plus a sweep interval (a quarter of it, at most 2 s).
   */
  leaseMs: number;
  /** Idle SSE streams get a `: heartbeat` comment this often. */
  streamHeartbeatMs: number;
  /** Long /wait and /join responses send a newline this often. */
  waitKeepAliveMs: number;
  /** Event logs are kept this long after their run ended. */
  runLogRetentionMs: number;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  /** How long a stopping process lets executing runs finish. */
  shutdownGraceMs: number;
  /** SQLite commit durability: `normal` survives a killed process, `full` also power loss. */
  sqliteSynchronous: "normal" | "full";
  /**
   * Several processes share the SQLite data directory (a new revision starting
   * beside the old one): runs are recovered through leases only, and signals
   * cross processes through the database. Ignored with `databaseUrl`.
   */
  sqliteShared: boolean;
  /**
   * BERTH_EXECUTION_THREAD: on embedded SQLite, `off` (the default): runs
   * execute on the main thread; `on`: in a worker thread of their own beside
   * the HTTP thread; `auto`: on the main thread and, once they keep it busy on
   * a host with a second core, also in such a thread (execution-thread.ts).
   */
  executionThread: "auto" | "on" | "off";
  /** PostgreSQL instead of SQLite (scale-out). */
  databaseUrl?: string;
  /** BERTH_API_KEY: every request but /ok must carry it. */
  apiKey?: string;
  /** Redis for live streams, wake-ups and cancellations across processes. */
  redisUrl?: string;
  /** Connections per process to PostgreSQL. */
  postgresPoolSize: number;
  /** BERTH_PG_SYNCHRONOUS_COMMIT: which PostgreSQL commits wait for the WAL flush (docs/scaling.md). */
  postgresSynchronousCommit: "on" | "events" | "off";
  /** Prefix of Berth's Redis keys and channels, or of its NOTIFY channel without Redis (several deployments may share a server). */
  redisPrefix: string;
  /** BERTH_INTERNAL_TRUNCATE: serve `POST /internal/truncate`, which empties the database (test servers only). */
  internalTruncate: boolean;
  /** BERTH_STORE_SWEEP_SECONDS: how often expired store items are deleted, overriding langgraph.json's `store.ttl.sweep_interval_minutes`. */
  storeSweepMs?: number;
  /** BERTH_CRON_POLL_SECONDS: the cron scheduler's longest sleep (it wakes for the earliest tick; other processes' new crons are seen within it). */
  cronPollMs: number;
  /** Where runs are traced (LANGSMITH_TRACING=true, LANGSMITH_ENDPOINT, ...); undefined: not traced. */
  tracing?: TracingSettings;
  /** BERTH_WEBHOOK_SECRET: deliveries are signed with it (HMAC-SHA256); unset: unsigned. */
  webhookSecret?: string;
  /** BERTH_WEBHOOK_RETRY_SECONDS: a failing delivery is retried with backoff for this long after its run ended. */
  webhookRetryMs: number;
  /** BERTH_WEBHOOK_TIMEOUT_SECONDS: one attempt waits this long for the receiver's answer. */
  webhookTimeoutMs: number;
  /** BERTH_WEBHOOK_ALLOW_PRIVATE: webhooks may target private and loopback addresses; unset: only in `berth dev`. */
  webhookAllowPrivate?: boolean;
  /** LANGGRAPH_CONFIG: the system assistants' default config and context (JSON), as the reference server reads it. */
  langgraphConfig?: string;
  /** LANGGRAPH_API_URL: the address runs name as theirs (`langgraph_api_url`); unset: the one this server listens on. */
  langgraphApiUrl?: string;
  /** OPENAI_API_KEY and OPENAI_BASE_URL, for `store.index.embed: "openai:<model>"`. */
  openai: OpenAiSettings;
  schemas: SchemaSettings;
}

export interface OpenAiSettings {
  apiKey?: string;
  baseUrl: string;
}

/** How graphs' schemas are read from their TypeScript types. */
export interface SchemaSettings {
  /** BERTH_SCHEMA_CACHE_DIR: where they are kept; unset: the server's data directory (`berth check`: beside langgraph.json). */
  cacheDir?: string;
  /** BERTH_SCHEMA_RESOLVE_TIMEOUT_MS: how long reading one graph's may take (default 30 s). */
  timeoutMs: number;
}

/**
 * Run slots of a process when BERTH_WORKERS does not say: twice the hosted
 * platform's high-load setting (50), since a run awaiting a model holds only
 * memory; CPU-bound graphs want fewer (docs/scaling.md, "Runs per process").
 */
export const DEFAULT_WORKERS = 100;

export function settingsFromEnv(): ServerSettings {
  return {
    workers: envNumber("BERTH_WORKERS", DEFAULT_WORKERS, { min: 1, integer: true }),
    runTimeoutMs: envNumber("BERTH_RUN_TIMEOUT_SECONDS", 0, { min: 0 }) * 1000,
    maxAttempts: envNumber("BERTH_MAX_ATTEMPTS", 3, { min: 1, integer: true }),
    leaseMs: envNumber("BERTH_LEASE_SECONDS", 10, { min: 1 }) * 1000,
    streamHeartbeatMs: envNumber("BERTH_STREAM_HEARTBEAT_SECONDS", 5, { min: 0.01 }) * 1000,
    waitKeepAliveMs: envNumber("BERTH_WAIT_KEEPALIVE_SECONDS", 5, { min: 0.01 }) * 1000,
    runLogRetentionMs: envNumber("BERTH_RUN_LOG_RETENTION_SECONDS", 3600, { min: 0 }) * 1000,
    bodyLimitBytes: envNumber("BERTH_BODY_LIMIT_BYTES", 32 * 1024 * 1024, { min: 1024, integer: true }),
    shutdownGraceMs: envNumber("BERTH_SHUTDOWN_GRACE_SECONDS", 10, { min: 0 }) * 1000,
    sqliteSynchronous: envOneOf("BERTH_SQLITE_SYNCHRONOUS", ["normal", "full"] as const, "normal"),
    sqliteShared: envBoolean("BERTH_SQLITE_SHARED", false),
    executionThread: envOneOf("BERTH_EXECUTION_THREAD", ["auto", "on", "off"] as const, "off"),
    databaseUrl: process.env.DATABASE_URL || undefined,
    apiKey: process.env.BERTH_API_KEY || undefined,
    redisUrl: process.env.REDIS_URL || undefined,
    postgresPoolSize: envNumber("BERTH_PG_POOL_SIZE", 10, { min: 1, integer: true }),
    postgresSynchronousCommit: envOneOf("BERTH_PG_SYNCHRONOUS_COMMIT", ["on", "events", "off"] as const, "on"),
    redisPrefix: process.env.BERTH_REDIS_PREFIX || "berth",
    internalTruncate: envBoolean("BERTH_INTERNAL_TRUNCATE", false),
    storeSweepMs: process.env.BERTH_STORE_SWEEP_SECONDS?.trim()
      ? envNumber("BERTH_STORE_SWEEP_SECONDS", 3600, { min: 0.01 }) * 1000
      : undefined,
    cronPollMs: envNumber("BERTH_CRON_POLL_SECONDS", 5, { min: 0.01 }) * 1000,
    tracing: tracingSettingsFromEnv(process.env),
    webhookSecret: process.env.BERTH_WEBHOOK_SECRET || undefined,
    webhookRetryMs: envNumber("BERTH_WEBHOOK_RETRY_SECONDS", 3600, { min: 0 }) * 1000,
    webhookTimeoutMs: envNumber("BERTH_WEBHOOK_TIMEOUT_SECONDS", 10, { min: 0.1 }) * 1000,
    webhookAllowPrivate: process.env.BERTH_WEBHOOK_ALLOW_PRIVATE?.trim()
      ? envBoolean("BERTH_WEBHOOK_ALLOW_PRIVATE", false)
      : undefined,
    langgraphConfig: process.env.LANGGRAPH_CONFIG,
    langgraphApiUrl: process.env.LANGGRAPH_API_URL || undefined,
    openai: openAiSettingsFromEnv(),
    schemas: schemaSettingsFromEnv(),
  };
}

export function openAiSettingsFromEnv(): OpenAiSettings {
  return {
    apiKey: process.env.OPENAI_API_KEY || undefined,
    baseUrl: (process.env.OPENAI_BASE_URL || "https://api.openai.com/v1").replace(/\/+$/, ""),
  };
}

export function schemaSettingsFromEnv(): SchemaSettings {
  return {
    cacheDir: process.env.BERTH_SCHEMA_CACHE_DIR || undefined,
    timeoutMs: envNumber("BERTH_SCHEMA_RESOLVE_TIMEOUT_MS", 30_000, { min: 1 }),
  };
}

/** LOG_LEVEL, for the loggers made outside the service kit's (`berth check` writes to stderr). */
export function logLevelFromEnv(): string {
  return process.env.LOG_LEVEL ?? "info";
}

/**
 * The environment itself, for what reads variables the project names (webhook header templates, `BERTH_AUTH_*` of
 * the built-in schemes, the official images' `LANGSERVE_GRAPHS`): read after `applyProjectEnv`.
 */
export function environment(): NodeJS.ProcessEnv {
  return process.env;
}

/** Applies the project's env; variables already set in the environment win. */
export function applyProjectEnv(env: Record<string, string>): void {
  for (const [key, value] of Object.entries(env)) {
    if (process.env[key] === undefined) process.env[key] = value;
  }
}

type Env = Record<string, string | undefined>;

/** LangSmith's own default when no endpoint is set. */
const DEFAULT_ENDPOINT = "https://api.smith.langchain.com";
/** The langsmith client's default token lifetime (3 hours). */
const DEFAULT_FEEDBACK_URL_TTL_SECONDS = 3 * 60 * 60;

/** `LANGSMITH_X`, else its older name `LANGCHAIN_X` (as the langsmith client reads them). */
function langsmithVar(env: Env, name: string): string | undefined {
  return env[`LANGSMITH_${name}`]?.trim() || env[`LANGCHAIN_${name}`]?.trim() || undefined;
}

/** The same switches `@langchain/core` honours (`isTracingEnabled`). */
function tracingSwitchedOn(env: Env): boolean {
  return ["LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING"].some(
    (name) => env[name] === "true",
  );
}

/** Tracing settings from LangChain's variables (tracing/settings.ts), or undefined when tracing is off. */
export function tracingSettingsFromEnv(env: Env): TracingSettings | undefined {
  if (!tracingSwitchedOn(env)) return undefined;
  const ttlSeconds = envNumber("BERTH_FEEDBACK_URL_TTL_SECONDS", DEFAULT_FEEDBACK_URL_TTL_SECONDS, { min: 1 }, env);
  return {
    endpoint: (langsmithVar(env, "ENDPOINT") ?? DEFAULT_ENDPOINT).replace(/\/+$/, ""),
    apiKey: langsmithVar(env, "API_KEY"),
    project: langsmithVar(env, "PROJECT") ?? "default",
    feedbackUrlTtlMs: ttlSeconds * 1000,
    workspaceId: langsmithVar(env, "WORKSPACE_ID"),
    samplingRate: samplingRate(langsmithVar(env, "TRACING_SAMPLING_RATE")),
  };
}

/** A share of runs to trace, as the langsmith client reads it: a number from 0 to 1, anything else all runs. */
function samplingRate(text: string | undefined): number {
  const rate = text === undefined ? Number.NaN : Number(text);
  return Number.isFinite(rate) && rate >= 0 && rate <= 1 ? rate : 1;
}

/** The built-in auth schemes' variables (BERTH_AUTH_*), as the schemes check them (http/auth/builtin-schemes.ts). */
export interface BuiltinAuthSettings {
  /** BERTH_AUTH_API_KEYS: a JSON object of API keys and their users. */
  apiKeys?: string;
  /** Set when BERTH_AUTH_JWT_JWKS_URL or BERTH_AUTH_JWT_SECRET is. */
  jwt?: JwtAuthSettings;
}

export interface JwtAuthSettings {
  jwksUrl?: string;
  secret?: string;
  issuer?: string;
  audience?: string;
  clockSkewSeconds: number;
  identityClaim: string;
}

/** Read after the project's env is applied (it may set them). */
export function builtinAuthSettingsFromEnv(env: Env = process.env): BuiltinAuthSettings {
  const jwksUrl = env.BERTH_AUTH_JWT_JWKS_URL?.trim() || undefined;
  const secret = env.BERTH_AUTH_JWT_SECRET || undefined;
  return {
    apiKeys: env.BERTH_AUTH_API_KEYS?.trim() ? env.BERTH_AUTH_API_KEYS : undefined,
    jwt:
      jwksUrl || secret
        ? {
            jwksUrl,
            secret,
            issuer: env.BERTH_AUTH_JWT_ISSUER?.trim() || undefined,
            audience: env.BERTH_AUTH_JWT_AUDIENCE?.trim() || undefined,
            clockSkewSeconds: envNumber("BERTH_AUTH_JWT_CLOCK_SKEW_SECONDS", 30, { min: 0 }, env),
            identityClaim: env.BERTH_AUTH_JWT_IDENTITY_CLAIM?.trim() || "sub",
          }
        : undefined,
  };
}
