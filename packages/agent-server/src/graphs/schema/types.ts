/** A JSON Schema (draft-07 shaped) as served by the schemas endpoints. */
export type JsonSchema = Record<string, unknown>;

/** The schemas of one graph that can come from its types or its runtime schemas. */
export interface TypedSchemas {
  input: JsonSchema | null;
  output: JsonSchema | null;
  state: JsonSchema | null;
  config: JsonSchema | null;
}

/** Schemas from static analysis: the root graph under "", subgraphs under their namespace ("child", "child|inner"). */
export type StaticGraphSchemas = Record<string, TypedSchemas>;

export const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
