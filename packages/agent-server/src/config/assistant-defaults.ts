import { z } from "zod";
import type { JsonObject } from "../storage/types.js";
import { ConfigError } from "./langgraph-config.js";

/** A system assistant's config and context, per graph id. */
export type SystemAssistantDefaults = Record<string, { config: JsonObject; context: JsonObject }>;

const LangGraphConfigEnv = z.record(z.string(), z.record(z.string(), z.unknown()));

/**
 * `LANGGRAPH_CONFIG`, as the reference server reads it: JSON
 * `{"<graph id>": {"configurable": {...}, "tags": [...], ..., "context": {...}}}`;
 * `context` becomes the system assistant's context, the rest its config.
 */
export function systemAssistantDefaults(raw: string | undefined): SystemAssistantDefaults {
  if (raw === undefined || raw.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError(`LANGGRAPH_CONFIG is not valid JSON: ${(error as Error).message}`);
  }
  const result = LangGraphConfigEnv.safeParse(parsed);
  if (!result.success) {
    throw new ConfigError(
      'LANGGRAPH_CONFIG must be a JSON object of graph ids to configs: {"<graph id>": {"configurable": {...}}}',
    );
  }
  const defaults: SystemAssistantDefaults = {};
  for (const [graphId, entry] of Object.entries(result.data)) {
    const { context, ...config } = entry;
    if (context !== undefined && (typeof context !== "object" || context === null || Array.isArray(context))) {
      throw new ConfigError(`LANGGRAPH_CONFIG: "${graphId}".context must be an object`);
    }
    defaults[graphId] = { config: config as JsonObject, context: (context ?? {}) as JsonObject };
  }
  return defaults;
}
