import type { GraphSpec } from "../config/langgraph-config.js";
import type { SchemaSettings } from "../config/settings.js";
import { createLogger } from "../logger.js";
import type { CompiledGraph } from "./compiled-graph.js";
import { StaticSchemaResolver } from "./schema/static-resolver.js";
import type { JsonSchema, StaticGraphSchemas, TypedSchemas } from "./schema/types.js";

export type { JsonSchema };

export interface GraphSchemas {
  input_schema: JsonSchema | null;
  output_schema: JsonSchema | null;
  state_schema: JsonSchema | null;
  config_schema: JsonSchema | null;
  context_schema: JsonSchema | null;
}

/**
 * A subgraph's schemas under both names clients read: the reference JS server's
 * (`state`, `input`, `output`, `config`) and the SDK's `GraphSchema` fields.
 */
export type SubgraphSchemas = GraphSchemas & TypedSchemas;

let resolver: StaticSchemaResolver | undefined;
let reading: SchemaSettings = { timeoutMs: 30_000 };

/**
 * How this process reads schemas from TypeScript types. The server keeps them under its data directory (a
 * deployment's project directory is read-only); without a `cacheDir` (`berth check`, tests) they go to
 * `.berth/schema-cache/` beside langgraph.json.
 */
export function configureSchemaReading(settings: SchemaSettings): void {
  reading = settings;
}

/** One per process: the static schemas are read once per graph module. */
function staticResolver(): StaticSchemaResolver {
  resolver ??= StaticSchemaResolver.create(createLogger().child({ component: "schemas" }), reading);
  return resolver;
}

/** The readers of a graph's runtime schemas, loaded on first use: they load LangGraph's zod support. */
function schemaReaders(): Promise<typeof import("./schema/runtime.js")> {
  return import("./schema/runtime.js");
}

/**
 * A graph's JSON schemas, each from the best source that has it: its runtime
 * (zod) schemas, else its TypeScript types (read on first use), else its
 * channel names.
 */
export async function resolveGraphSchemas(spec: GraphSpec | undefined, graph: CompiledGraph): Promise<GraphSchemas> {
  const { channelSchemas, isComplete, runtimeSchemas } = await schemaReaders();
  const runtime = runtimeSchemas(graph);
  const typed = isComplete(runtime) ? undefined : (await staticSchemas(spec))?.[""];
  return merge(runtime, typed, channelSchemas(graph));
}

/** The schemas of the graph's subgraphs by namespace, from the same sources. */
export async function resolveSubgraphSchemas(
  spec: GraphSpec | undefined,
  graph: CompiledGraph,
  namespace: string | undefined,
  recurse: boolean,
): Promise<Record<string, SubgraphSchemas>> {
  const { channelSchemas, isComplete, runtimeSchemas } = await schemaReaders();
  const result: Record<string, SubgraphSchemas> = {};
  let typed: StaticGraphSchemas | undefined;
  for await (const [name, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) {
    const runtime = runtimeSchemas(subgraph);
    if (!isComplete(runtime)) typed ??= (await staticSchemas(spec)) ?? {};
    const schemas = merge(runtime, typed?.[name], channelSchemas(subgraph));
    result[name] = {
      state: schemas.state_schema,
      input: schemas.input_schema,
      output: schemas.output_schema,
      config: schemas.config_schema,
      ...schemas,
    };
  }
  return result;
}

function staticSchemas(spec: GraphSpec | undefined): Promise<StaticGraphSchemas | undefined> {
  if (!spec) return Promise.resolve(undefined);
  return staticResolver().resolve(spec.graphId, spec.file, spec.exportName);
}

function merge(runtime: TypedSchemas, typed: TypedSchemas | undefined, channels: TypedSchemas): GraphSchemas {
  const pick = (part: keyof TypedSchemas) => runtime[part] ?? typed?.[part] ?? channels[part];
  const config = pick("config");
  return {
    input_schema: pick("input"),
    output_schema: pick("output"),
    state_schema: pick("state"),
    config_schema: config,
    context_schema: config,
  };
}
