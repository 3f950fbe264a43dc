/**
 * Tracing is configured with the standard LangChain variables, so whatever
 * sets them for any LangChain program (the control plane for its deployments,
 * a developer's shell for `berth dev`) configures Berth too.
 */
import { envNumber } from "@berth/service-kit";

export interface TracingSettings {
  /** Base URL of the LangSmith-compatible API (`LANGSMITH_ENDPOINT`), without a trailing slash. */
  endpoint: string;
  /** `LANGSMITH_API_KEY`, sent as `x-api-key`. */
  apiKey?: string;
  /** The project every run is traced into (`LANGSMITH_PROJECT`). */
  project: string;
  /** How long a feedback URL stays valid (`BERTH_FEEDBACK_URL_TTL_SECONDS`). */
  feedbackUrlTtlMs: number;
}

/** LangSmith's own default when no endpoint is set. */
const DEFAULT_ENDPOINT = "https://api.smith.langchain.com";
/** The langsmith client's default token lifetime (3 hours). */
const DEFAULT_FEEDBACK_URL_TTL_SECONDS = 3 * 60 * 60;

type Env = Record<string, string | undefined>;

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

/** Tracing settings, or undefined when tracing is off. */
export function tracingSettingsFromEnv(env: Env): TracingSettings | undefined {
  if (!tracingSwitchedOn(env)) return undefined;
  const ttlSeconds = envNumber("BERTH_FEEDBACK_URL_TTL_SECONDS", DEFAULT_FEEDBACK_URL_TTL_SECONDS, { min: 1 }, env);
  return {
    endpoint: (langsmithVar(env, "ENDPOINT") ?? DEFAULT_ENDPOINT).replace(/\/+$/, ""),
    apiKey: langsmithVar(env, "API_KEY"),
    project: langsmithVar(env, "PROJECT") ?? "default",
    feedbackUrlTtlMs: ttlSeconds * 1000,
  };
}
