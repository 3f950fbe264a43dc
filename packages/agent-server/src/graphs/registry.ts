import type { RunnableConfig } from "@langchain/core/runnables";
import { HttpStatusError } from "@berth/service-kit";
import type { GraphSpec } from "../config/langgraph-config.js";
import type { Logger } from "../logger.js";
import type { BerthCheckpointer } from "../storage/types.js";
import { type CompiledGraph, toCompiledGraph } from "./compiled-graph.js";
import { importProjectModule } from "./project-module.js";
import { throwSite, withinProject } from "./throw-site.js";

type GraphFactory = (config: RunnableConfig) => unknown;

type LoadedGraph = { spec: GraphSpec } & ({ graph: CompiledGraph } | { factory: GraphFactory });

/** What graphs are bound to, and what must be in place before a graph module is imported. */
interface GraphRuntime {
  checkpointer: BerthCheckpointer;
  /** Run after each graph module's import (memory-store-queue.ts). */
  afterImport: () => void;
}

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

/**
 * The graphs of a project, imported once and bound to Berth's checkpointer. Their ids, files and descriptions are known
 * from langgraph.json alone: `load` imports every module before it resolves (`berth serve`, `berth check`), `deferred`
 * imports none until `loadAll()` or the first `get()` (`berth dev`, which answers `/ok` first). Nothing of LangChain is
 * loaded before the first graph module is: the checkpointer and the SDK's logger come with it.
 */
export class GraphRegistry {
  private readonly imports = new Map<string, Promise<LoadedGraph>>();
  private all: Promise<void> | undefined;
  private runtime: Promise<GraphRuntime> | undefined;

  private constructor(
    private readonly specs: Map<string, GraphSpec>,
    private readonly checkpointer: () => Promise<BerthCheckpointer>,
    private readonly logger: Logger,
  ) {}

  /** Imports every graph module; the first one that fails stops the start. `logger` receives what graphs log with the SDK's `getLogger()`. */
  static async load(specs: GraphSpec[], checkpointer: () => Promise<BerthCheckpointer>, logger: Logger): Promise<GraphRegistry> {
    const registry = GraphRegistry.deferred(specs, checkpointer, logger);
    await registry.loadAll();
    return registry;
  }

  /** Knows the graphs without importing them: `loadAll()` or a graph's first use does. */
  static deferred(specs: GraphSpec[], checkpointer: () => Promise<BerthCheckpointer>, logger: Logger): GraphRegistry {
    return new GraphRegistry(new Map(specs.map((spec) => [spec.graphId, spec])), checkpointer, logger);
  }

  /**
   * Imports every graph module not imported yet, in langgraph.json's order; rejects with the first GraphLoadError.
   * Once only: later calls share the first's outcome.
   */
  loadAll(): Promise<void> {
    this.all ??= (async () => {
      for (const graphId of this.specs.keys()) await this.imported(graphId);
    })();
    return this.all;
  }

  ids(): string[] {
    return [...this.specs.keys()];
  }

  has(graphId: string): boolean {
    return this.specs.has(graphId);
  }

  spec(graphId: string): GraphSpec | undefined {
    return this.specs.get(graphId);
  }

  /**
   * The graph to run with `config`; a factory is called again for every use. Waits for its module's import; a module
   * that failed to import answers 503 with why (only a deferred registry serves requests with such a graph).
   */
  async get(graphId: string, config: RunnableConfig): Promise<CompiledGraph> {
    if (!this.specs.has(graphId)) throw new Error(`graph "${graphId}" is not loaded`);
    const loaded = await this.imported(graphId).catch((error: unknown) => {
      if (!(error instanceof GraphLoadError)) throw error;
      // Not an outage of the server's own (the error handler would log it so): the project's code, already reported.
      throw Object.assign(new HttpStatusError(503, error.message), { cause: error });
    });
    if ("graph" in loaded) return loaded.graph;
    const graph = await toCompiledGraph(loaded.factory(config));
    graph.checkpointer = (await this.prepared()).checkpointer;
    return graph;
  }

  private imported(graphId: string): Promise<LoadedGraph> {
    let loading = this.imports.get(graphId);
    if (!loading) {
      const spec = this.specs.get(graphId)!;
      loading = this.prepared().then((runtime) => loadGraph(spec, runtime));
      loading.catch(() => {}); // reported by whoever awaits it (loadAll, get), not as an unhandled rejection
      this.imports.set(graphId, loading);
    }
    return loading;
  }

  /**
   * The checkpointer, the SDK's logger (graph modules call `getLogger()` as they load), the store queue's patch, the
   * lighter run contexts of runnable calls (run-contexts.ts) and the one-pass callback manager copies (callback-copies.ts).
   * LangGraph itself is loaded with them, before a TypeScript loader is registered for the first graph module: the
   * loader's hooks would otherwise serve each of its modules (project-module.ts).
   */
  private prepared(): Promise<GraphRuntime> {
    this.runtime ??= (async () => {
      const [
        checkpointer,
        { provideGraphLogger },
        { drainStoreQueuesOnArrival },
        { lightenRunContexts },
        { copyCallbackManagersInOnePass },
      ] = await Promise.all([
        this.checkpointer(),
        import("./sdk-logger.js"),
        import("./memory-store-queue.js"),
        import("./run-contexts.js"),
        import("./callback-copies.js"),
        import("@langchain/langgraph"),
      ]);
      provideGraphLogger(this.logger);
      lightenRunContexts();
      copyCallbackManagersInOnePass();
      return { checkpointer, afterImport: drainStoreQueuesOnArrival };
    })();
    return this.runtime;
  }
}

async function loadGraph(spec: GraphSpec, { checkpointer, afterImport }: GraphRuntime): Promise<LoadedGraph> {
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
  } finally {
    afterImport(); // after each import: the CommonJS copy of LangGraph is there if the graph uses it
  }
}
