import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { RunTree } from "langsmith";

/*
 * Every runnable LangChain calls (each node, each channel write, each edge's
 * router) runs inside `runWithConfig`, which keeps the call's config in the
 * async context for `getConfig()`, `interrupt()` and friends. With no tracer
 * among the call's callbacks it still configures a callback manager to look
 * for one and builds a langsmith `RunTree` with tracing disabled to hold the
 * config: ids, timestamps and environment lookups, ~9 % of the CPU of a short
 * run, for a tree that nothing traces. Without a tracer, the context below
 * is a run tree to whoever reads it (a context variable set under it keeps the
 * config, langsmith's `traceable` makes untraced children of it) that costs
 * no more than an object of a few fields. With a tracer (Berth's own, or LangChain's when the environment
 * switches tracing on) calls go to LangChain's code as before.
 */

/** Where LangChain keeps the config of the runnable being called, in the context's `extra`. */
const CHILD_CONFIG = Symbol.for("lc:child_config");
/** Where LangChain keeps context variables (`setContextVariable`), which a child context carries over. */
const CONTEXT_VARIABLES = Symbol.for("lc:context_variables");
/** The name LangChain recognizes a tracer by among a call's handlers. */
const TRACER_NAME = "langchain_tracer";

/** The environment switches that make LangChain add a tracer or a console logger of its own to every call. */
const SWITCHES = ["LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING", "LANGCHAIN_VERBOSE"];

type RunWithConfig = typeof AsyncLocalStorageProviderSingleton.runWithConfig;
type Handler = { name?: unknown };
type Context = { tracingEnabled?: unknown; [CONTEXT_VARIABLES]?: unknown };

let installed = false;

/**
 * Installs the lighter context for untraced calls into Berth's copy of
 * LangChain. Decided once: with one of SWITCHES set to "true" in the
 * environment at that moment, nothing changes.
 */
export function lightenUntracedRunContext(env: NodeJS.ProcessEnv = process.env): void {
  if (installed) return;
  installed = true;
  if (SWITCHES.some((name) => env[name] === "true")) return;
  const provider = AsyncLocalStorageProviderSingleton;
  const original: RunWithConfig = provider.runWithConfig.bind(provider);
  provider.runWithConfig = ((config, callback, avoidCreatingRootRunTree) => {
    const storage = provider.getInstance();
    const previous = storage.getStore() as Context | undefined;
    // A tracer in the config, a traced run around the call, or a caller that asks for no context of its own: LangChain's way.
    if (avoidCreatingRootRunTree || hasTracer(config?.callbacks) || previous?.tracingEnabled === true) {
      return original(config, callback, avoidCreatingRootRunTree);
    }
    const context = disabledTree(config);
    if (previous?.[CONTEXT_VARIABLES] !== undefined) context[CONTEXT_VARIABLES] = previous[CONTEXT_VARIABLES];
    return storage.run(context, callback);
  }) as RunWithConfig;
}

type DisabledTree = Context & { extra: Record<string | symbol, unknown> };

let DisabledTreeOf: (new (config: unknown) => DisabledTree) | undefined;

/**
 * A run tree with tracing disabled holding `config`, as LangChain's own: it inherits from one such tree made once
 * (ids and times nothing reads untraced) and has of its own what a copy of it or a child made under it reads.
 */
function disabledTree(config: unknown): DisabledTree {
  DisabledTreeOf ??= disabledTreeClass();
  return new DisabledTreeOf(config);
}

function disabledTreeClass(): new (config: unknown) => DisabledTree {
  const template = new RunTree({ name: "<runnable_lambda>", tracingEnabled: false });
  class DisabledRunTree {
    name = template.name;
    tracingEnabled = false;
    id = template.id;
    trace_id = template.trace_id;
    dotted_order = template.dotted_order;
    execution_order = template.execution_order;
    child_execution_order = template.child_execution_order;
    extra: Record<string | symbol, unknown>;
    /** Its own list: langsmith's `traceable` adds the runs it makes under a tree to the tree's children. */
    child_runs: unknown[] = [];
    constructor(config: unknown) {
      this.extra = { ...template.extra, [CHILD_CONFIG]: config };
    }
  }
  Object.setPrototypeOf(DisabledRunTree.prototype, template);
  return DisabledRunTree;
}

/** Whether a call's callbacks (a list of handlers, or a callback manager) include a tracer. */
function hasTracer(callbacks: unknown): boolean {
  if (!callbacks) return false;
  const handlers = Array.isArray(callbacks) ? callbacks : (callbacks as { handlers?: unknown }).handlers;
  return Array.isArray(handlers) && handlers.some((handler: Handler | null) => handler?.name === TRACER_NAME);
}
