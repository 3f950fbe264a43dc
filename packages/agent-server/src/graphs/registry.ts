import type { RunnableConfig } from "@langchain/core/runnables";
import type { GraphSpec } from "../config/langgraph-config.js";
import type { Logger } from "../logger.js";
import type { BerthCheckpointer } from "../storage/types.js";
import { type CompiledGraph, toCompiledGraph } from "./compiled-graph.js";
import { provideGraphLogger } from "./sdk-logger.js";
import { importProjectModule } from "./project-module.js";
import { drainStoreQueuesOnArrival } from "./memory-store-queue.js";
import { throwSite, withinProject } from "./throw-site.js";

type GraphFactory = (config: RunnableConfig) => unknown;

type LoadedGraph = { spec: GraphSpec } & ({ graph: CompiledGraph } | { factory: GraphFactory });

export class GraphLoadError extends Error {
  constructor(
    readonly spec: GraphSpec,
    cause: unknown,
  ) {
    // Paths as the project knows them: the same wherever it runs (a build's sandbox, an image, the developer's folder).
    const shown = (text: string) => (spec.projectDir === undefined ? text : withinProject(text, spec.projectDir));
    const site = throwSite(cause);
    super(
      shown(
        `failed to load graph "${spec.graphId}" from ${spec.file} (export "${spec.exportName}"): ${
          cause instanceof Error ? cause.message : String(cause)
        }${site === undefined ? "" : ` (at ${site})`}`,
      ),
      { cause },
    );
  }
}

/** The graphs of a project, loaded once at start and bound to Berth's checkpointer. */
export class GraphRegistry {
  private constructor(
    private readonly graphs: Map<string, LoadedGraph>,
    private readonly checkpointer: BerthCheckpointer,
  ) {}

  /** Imports every graph module; the first one that fails stops the start. `logger` receives what graphs log with the SDK's `getLogger()`. */
  static async load(specs: GraphSpec[], checkpointer: BerthCheckpointer, logger: Logger): Promise<GraphRegistry> {
    provideGraphLogger(logger);
    const graphs = new Map<string, LoadedGraph>();
    for (const spec of specs) {
      graphs.set(spec.graphId, await loadGraph(spec, checkpointer));
    }
    drainStoreQueuesOnArrival(); // once the graphs are loaded: the CommonJS copy of LangGraph is there if they use it
    return new GraphRegistry(graphs, checkpointer);
  }

  ids(): string[] {
    return [...this.graphs.keys()];
  }

  has(graphId: string): boolean {
    return this.graphs.has(graphId);
  }

  spec(graphId: string): GraphSpec | undefined {
    return this.graphs.get(graphId)?.spec;
  }

  /** The graph to run with `config`; a factory is called again for every use. */
  async get(graphId: string, config: RunnableConfig): Promise<CompiledGraph> {
    const loaded = this.graphs.get(graphId);
    if (!loaded) throw new Error(`graph "${graphId}" is not loaded`);
    if ("graph" in loaded) return loaded.graph;
    const graph = await toCompiledGraph(loaded.factory(config));
    graph.checkpointer = this.checkpointer;
    return graph;
  }
}

async function loadGraph(spec: GraphSpec, checkpointer: BerthCheckpointer): Promise<LoadedGraph> {
  try {
    const module = await importProjectModule(spec.file);
    if (!(spec.exportName in module) || module[spec.exportName] === undefined) {
      throw new Error(`the module has no export "${spec.exportName}"`);
    }
    const exported = module[spec.exportName];
    if (typeof exported === "function") return { spec, factory: exported as GraphFactory };
    const graph = await toCompiledGraph(exported);
    graph.checkpointer = checkpointer;
    return { spec, graph };
  } catch (error) {
    throw new GraphLoadError(spec, error);
  }
}
