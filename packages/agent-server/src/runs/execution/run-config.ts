import { createRequire } from "node:module";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Assistant, JsonObject, Run, RunIds, RunThread } from "../../storage/types.js";

export interface RunScope {
  config: RunnableConfig;
  ids: RunIds;
  /** Merged into every checkpoint the run writes. */
  metadata: JsonObject;
  context: JsonObject;
}

function configurableOf(config: JsonObject): JsonObject {
  return (config.configurable as JsonObject | undefined) ?? {};
}

/**
 * The config a run executes with: assistant < thread < run, plus the ids
 * LangGraph and graphs read from `configurable`, and the checkpoint to start
 * from when the run forks or resumes one.
 */
export function runScope(run: Run, assistant: Assistant, thread: RunThread, attempt = 1, apiUrl?: string): RunScope {
  const runConfig = run.kwargs.config;
  const ids: RunIds = {
    thread_id: run.thread_id,
    run_id: run.run_id,
    graph_id: assistant.graph_id,
    assistant_id: assistant.assistant_id,
  };
  const checkpoint = run.kwargs.checkpoint ?? {};
  const metadata: JsonObject = {
    ls_integration: "langgraph",
    ...assistant.metadata,
    ...thread.metadata,
    ...run.metadata,
    ...platformMetadata(attempt, apiUrl),
    ...ids,
  };
  const config: RunnableConfig = {
    ...camelCased(assistant.config),
    ...camelCased(thread.config),
    ...camelCased(runConfig),
    configurable: {
      ...configurableOf(assistant.config),
      ...configurableOf(thread.config),
      ...configurableOf(runConfig),
      ...ids,
      ...checkpoint,
    },
    metadata: { ...(runConfig.metadata as JsonObject | undefined), ...metadata },
  };
  return { config, ids, metadata, context: { ...assistant.context, ...run.kwargs.context } };
}

/** The API's snake_case run-config keys, under the names LangChain reads. */
const CONFIG_KEY_NAMES: Record<string, string> = {
  recursion_limit: "recursionLimit",
  run_name: "runName",
  max_concurrency: "maxConcurrency",
  run_id: "runId",
};

/** A config as the API carries it, with the keys LangChain reads renamed (a null value is left out: LangChain's default applies). */
function camelCased(config: JsonObject): JsonObject {
  const renamed: JsonObject = {};
  for (const [key, value] of Object.entries(config)) {
    const name = CONFIG_KEY_NAMES[key];
    if (name === "runId") continue; // the run's id is Berth's, never the client's
    if (name === undefined) renamed[key] = value;
    else if (value !== null && value !== undefined) renamed[name] = value;
  }
  return renamed;
}

const LANGGRAPH_VERSION = (createRequire(import.meta.url)("@langchain/langgraph/package.json") as { version: string }).version;

/**
 * What the reference server adds to every run's metadata (and so to its checkpoints and streamed metadata). Its
 * `langgraph_api_url` is LANGGRAPH_API_URL, which its dev server sets to its own address: `url` is that variable
 * when the operator sets it (a public address, say), else the address this server listens on.
 */
function platformMetadata(attempt: number, url: string | undefined): JsonObject {
  return {
    run_attempt: attempt,
    langgraph_version: LANGGRAPH_VERSION,
    langgraph_plan: "developer",
    langgraph_host: "self-hosted",
    ...(url ? { langgraph_api_url: url } : {}),
  };
}
