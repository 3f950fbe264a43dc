import type { BaseChannel, Pregel, PregelNode } from "@langchain/langgraph";

/** A compiled LangGraph graph as Berth drives it. */
export type CompiledGraph = Pregel<Record<string, PregelNode>, Record<string, BaseChannel>>;

export function isCompiledGraph(value: unknown): value is CompiledGraph {
  const candidate = value as Partial<CompiledGraph> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.getState === "function" &&
    typeof candidate.stream === "function" &&
    typeof candidate.invoke === "function"
  );
}

/**
 * Turns what a module exports (or a factory returns) into a compiled graph:
 * a compiled graph, an uncompiled StateGraph, an agent wrapping its graph in
 * `.graph`, or a Promise of any of these.
 */
export async function toCompiledGraph(exported: unknown): Promise<CompiledGraph> {
  const value = await exported;
  if (isCompiledGraph(value)) return value;
  const wrapper = value as { graph?: unknown; compile?: () => unknown } | null;
  if (wrapper && isCompiledGraph(wrapper.graph)) return wrapper.graph;
  if (wrapper && typeof wrapper.compile === "function") {
    const compiled = await wrapper.compile();
    if (isCompiledGraph(compiled)) return compiled;
  }
  throw new TypeError(`expected a compiled graph, a StateGraph, a Promise of one, or a factory function; got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "Object"})`;
  return `a ${typeof value}`;
}
