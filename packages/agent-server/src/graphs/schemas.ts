import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getStateTypeSchema,
} from "@langchain/langgraph/zod/schema";
import type { CompiledGraph } from "./compiled-graph.js";

export type JsonSchema = Record<string, unknown>;

export interface GraphSchemas {
  input_schema: JsonSchema | null;
  output_schema: JsonSchema | null;
  state_schema: JsonSchema | null;
  config_schema: JsonSchema | null;
  context_schema: JsonSchema | null;
}

/** The parts of a StateGraph builder that describe its channels. */
interface BuilderDefinitions {
  _schemaDefinition?: Record<string, unknown>;
  _inputDefinition?: Record<string, unknown>;
  _outputDefinition?: Record<string, unknown>;
}

/**
 * JSON schemas of a graph, from its runtime schema: zod state schemas give
 * full schemas; Annotation-based graphs only describe their channel names.
 */
export function graphSchemas(graph: CompiledGraph): GraphSchemas {
  const builder = (graph as unknown as { builder?: BuilderDefinitions }).builder ?? {};
  const configSchema = (getConfigTypeSchema(graph) as JsonSchema | undefined) ?? null;
  return {
    input_schema: (getInputTypeSchema(graph) as JsonSchema | undefined) ?? channelsSchema(builder._inputDefinition),
    output_schema: (getOutputTypeSchema(graph) as JsonSchema | undefined) ?? channelsSchema(builder._outputDefinition),
    state_schema: (getStateTypeSchema(graph) as JsonSchema | undefined) ?? channelsSchema(builder._schemaDefinition),
    config_schema: configSchema,
    context_schema: configSchema,
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
