import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getUpdateTypeSchema,
} from "@langchain/langgraph/zod/schema";
import type { CompiledGraph } from "../compiled-graph.js";
import type { JsonSchema, TypedSchemas } from "./types.js";

/**
 * The schemas a graph carries at run time (zod or StateSchema state, input,
 * output and context schemas), null where it has none. State is the update
 * schema (every key optional), as the reference server gives.
 */
export function runtimeSchemas(graph: CompiledGraph): TypedSchemas {
  return {
    state: schemaOrNull(() => getUpdateTypeSchema(graph)),
    input: schemaOrNull(() => getInputTypeSchema(graph)),
    output: schemaOrNull(() => getOutputTypeSchema(graph)),
    config: schemaOrNull(() => getConfigTypeSchema(graph)),
  };
}

/** The runtime schemas name every part: no need to read the types. */
export function isComplete(schemas: TypedSchemas): boolean {
  return Object.values(schemas).every((schema) => schema !== null);
}

/** A schema the converter cannot express is no schema (the next source is tried). */
function schemaOrNull(read: () => unknown): JsonSchema | null {
  try {
    const schema = read();
    return schema && typeof schema === "object" ? (schema as JsonSchema) : null;
  } catch {
    return null;
  }
}

/** The parts of a StateGraph builder that describe its channels. */
interface BuilderDefinitions {
  _schemaDefinition?: Record<string, unknown>;
  _inputDefinition?: Record<string, unknown>;
  _outputDefinition?: Record<string, unknown>;
}

/** The last resort: the channel names, untyped (`{"messages": {}}`). */
export function channelSchemas(graph: CompiledGraph): TypedSchemas {
  const builder = (graph as unknown as { builder?: BuilderDefinitions }).builder ?? {};
  return {
    state: channelsSchema(builder._schemaDefinition),
    input: channelsSchema(builder._inputDefinition),
    output: channelsSchema(builder._outputDefinition),
    config: null,
  };
}

function channelsSchema(definition: Record<string, unknown> | undefined): JsonSchema | null {
  if (!definition || typeof definition !== "object") return null;
  const names = Object.keys(definition).filter((name) => !name.startsWith("__"));
  return {
    type: "object",
    properties: Object.fromEntries(names.map((name) => [name, {}])),
  };
}
