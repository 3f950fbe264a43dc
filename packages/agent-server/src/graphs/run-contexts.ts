import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { RunTree } from "langsmith";

/*
 * Every runnable LangChain calls (each node, each channel write, each edge's
 * router) runs inside `runWithConfig`, which keeps the call's config in the
 * async context for `getConfig()`, `interrupt()` and friends. With no tracer
 * among the call's callbacks it still configures a callback manager to look
 * for one and builds a langsmith `RunTree` with tracing disabled to hold the
 * config: ids, timestamps and environment lookups, ~9 % of the CPU of a short
 * run, for a tree that nothing traces. With a tracer it configures a copy of
 * the call's callback manager (its handlers, tags and metadata) only to ask
 * the tracer for the context of the parent run.
 *
 * Below, a call without a tracer gets a run tree to whoever reads it (a
 * context variable set under it keeps the config, langsmith's `traceable`
 * makes untraced children of it) that costs no more than an object of a few
 * fields, or no run tree when the caller asks for none (each step of a
 * stream); a call whose callback manager has a tracer and a parent run gets
 * that tracer's context directly (a copy of the manager has the same tracer
 * and parent). Anything else goes to LangChain's code: a call without a
 * tracer while the environment switches LangChain's tracing on (it would add
 * its own tracer), under a traced run tree, or under a context that disabled
 * tracing (which removes the tracer).
 */

/** Where LangChain keeps the config of the runnable being called, in the context's `extra`. */
const CHILD_CONFIG = Symbol.for("lc:child_config");
/** Where LangChain keeps context variables (`setContextVariable`), which a child context carries over. */
const CONTEXT_VARIABLES = Symbol.for("lc:context_variables");
/** The name LangChain recognizes a tracer by among a call's handlers. */
const TRACER_NAME = "langchain_tracer";

/** The environment switches that make LangChain add a tracer of its own to a call without one (`isTracingEnabled`). */
const TRACING_SWITCHES = ["LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING"];

/** contextOf's answer when only LangChain's own code makes the context right. */
const LANGCHAINS = Symbol("made by LangChain");

type RunWithConfig = typeof AsyncLocalStorageProviderSingleton.runWithConfig;
type Context = { tracingEnabled?: unknown; extra?: Record<string | symbol, unknown>; [CONTEXT_VARIABLES]?: unknown };

let installed = false;

/**
 * Installs the lighter contexts into Berth's copy of LangChain. The
 * environment's tracing switches are read once, here.
 */
export function lightenRunContexts(env: NodeJS.ProcessEnv = process.env): void {
  if (installed) return;
  installed = true;
  const tracingFromEnv = TRACING_SWITCHES.some((name) => env[name] === "true");
  const provider = AsyncLocalStorageProviderSingleton;
  const original: RunWithConfig = provider.runWithConfig.bind(provider);
  provider.runWithConfig = ((config, callback, avoidCreatingRootRunTree) => {
    const storage = provider.getInstance();
    const previous = storage.getStore() as Context | undefined;
    const made = contextOf(config, previous, tracingFromEnv, avoidCreatingRootRunTree === true);
    if (made === LANGCHAINS) return original(config, callback, avoidCreatingRootRunTree);
    let context = made;
    const variables = previous?.[CONTEXT_VARIABLES];
    if (variables !== undefined) {
      context ??= {};
      context[CONTEXT_VARIABLES] = variables;
    }
    return storage.run(context, callback);
  }) as RunWithConfig;
}

type Tracer = { name?: unknown; getRunTreeWithTracingConfig?: (parentRunId: string) => Context };
type CallbackManagerLike = { handlers?: unknown; getParentRunId?: () => string | undefined };

/**
 * The context of a call as LangChain would make it (undefined: none, as for an untraced call that asks for no run
 * tree), when it can be made directly; LANGCHAINS when LangChain must make it.
 */
function contextOf(
  config: { callbacks?: unknown } | undefined,
  previous: Context | undefined,
  tracingFromEnv: boolean,
  withoutRunTree: boolean,
): Context | undefined | typeof LANGCHAINS {
  const callbacks = config?.callbacks;
  const handlers = Array.isArray(callbacks) ? callbacks : (callbacks as CallbackManagerLike | undefined)?.handlers;
  const tracer = Array.isArray(handlers)
    ? (handlers as (Tracer | null)[]).find((handler) => handler?.name === TRACER_NAME)
    : undefined;
  if (!tracer) {
    if (tracingFromEnv || previous?.tracingEnabled === true) return LANGCHAINS;
    return withoutRunTree ? undefined : disabledTree(config);
  }
  if (Array.isArray(callbacks) || previous?.tracingEnabled === false) return LANGCHAINS;
  const parentRunId = (callbacks as CallbackManagerLike).getParentRunId?.();
  if (parentRunId === undefined || typeof tracer.getRunTreeWithTracingConfig !== "function") return LANGCHAINS;
  const context = tracer.getRunTreeWithTracingConfig(parentRunId);
  context.extra = { ...context.extra, [CHILD_CONFIG]: config };
  return context;
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
