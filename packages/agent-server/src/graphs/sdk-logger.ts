import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import type { Logger } from "../logger.js";

/** Where `getLogger()` of `@langchain/langgraph-sdk/logging` looks for the platform's logger. */
const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** The leveled methods of the SDK's Logger type (winston's names), mapped onto pino's levels. */
const LEVELS = {
  error: "error",
  warn: "warn",
  help: "info",
  data: "info",
  info: "info",
  debug: "debug",
  prompt: "info",
  http: "debug",
  verbose: "debug",
  input: "info",
  silly: "trace",
} as const;

type SdkLogger = Record<keyof typeof LEVELS, (message: unknown, ...meta: unknown[]) => SdkLogger>;

/**
 * Registers the logger that graph code gets from `getLogger()`, as the
 * reference server does: its lines go to Berth's JSON log, with the run,
 * thread and node ids when called inside a run. Idempotent; must run before
 * graph modules are imported (projects call it at import time).
 */
export function provideGraphLogger(logger: Logger): void {
  const graphLog = logger.child({ source: "graph" });
  const sdkLogger = {} as SdkLogger;
  for (const [method, level] of Object.entries(LEVELS) as [keyof typeof LEVELS, (typeof LEVELS)[keyof typeof LEVELS]][]) {
    sdkLogger[method] = (message, ...meta) => {
      const { text, fields } = entry(message, meta);
      graphLog[level]({ ...runIds(), ...fields }, text);
      return sdkLogger;
    };
  }
  (globalThis as Record<symbol, unknown>)[SDK_LOGGER] = sdkLogger;
}

/** winston's call shapes: (message, ...meta objects), (info object with `message`), (anything). */
function entry(message: unknown, meta: unknown[]): { text: string; fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  for (const item of meta) {
    if (item && typeof item === "object" && !Array.isArray(item)) Object.assign(fields, item);
    else if (item !== undefined) ((fields.args as unknown[] | undefined) ?? (fields.args = [])).push(item as never);
  }
  if (typeof message === "string") return { text: message, fields };
  if (message instanceof Error) return { text: message.message, fields: { ...fields, err: message } };
  if (message && typeof message === "object") {
    const { message: text, ...rest } = message as Record<string, unknown>;
    return { text: typeof text === "string" ? text : "", fields: { ...rest, ...fields } };
  }
  return { text: String(message), fields };
}

/** The ids of the run the caller is part of, from LangChain's run context (none outside a run). */
function runIds(): Record<string, unknown> {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { configurable?: Record<string, unknown>; metadata?: Record<string, unknown> }
    | undefined;
  if (!config) return {};
  const ids: Record<string, unknown> = {};
  const threadId = config.configurable?.thread_id ?? config.metadata?.thread_id;
  const runId = config.configurable?.run_id ?? config.metadata?.run_id;
  const node = config.metadata?.langgraph_node;
  if (typeof threadId === "string") ids.thread_id = threadId;
  if (typeof runId === "string") ids.run_id = runId;
  if (typeof node === "string") ids.langgraph_node = node;
  return ids;
}
