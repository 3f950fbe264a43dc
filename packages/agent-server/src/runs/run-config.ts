import type { RunnableConfig } from "@langchain/core/runnables";
import type { Assistant, JsonObject, Run, Thread } from "../storage/types.js";

/** The ids that name a run wherever it shows: configurable, metadata, checkpoints, traces. */
export interface RunIds {
  thread_id: string;
  run_id: string;
  graph_id: string;
  assistant_id: string;
}

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
export function runScope(run: Run, assistant: Assistant, thread: Thread): RunScope {
  const runConfig = run.kwargs.config;
  const ids: RunIds = {
    thread_id: run.thread_id,
    run_id: run.run_id,
    graph_id: assistant.graph_id,
    assistant_id: assistant.assistant_id,
  };
  const checkpoint = run.kwargs.checkpoint ?? {};
  const metadata: JsonObject = { ...assistant.metadata, ...thread.metadata, ...run.metadata, ...ids };
  const config: RunnableConfig = {
    ...assistant.config,
    ...thread.config,
    ...runConfig,
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
