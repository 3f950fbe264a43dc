import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { LLMResult } from "@langchain/core/outputs";
import type { Client } from "langsmith";
import { RunTree, type RunTreeConfig } from "langsmith/run_trees";
import { errorText } from "./span-json.js";
import type { SpanExporter } from "./span-export.js";
import { dottedSegment, type Span, type SpanDefaults, type TracePolicy, uniqueMicros } from "./span.js";

const TRACE_POLICY_KEY = Symbol.for("langchain.trace_policy");

/** A run id LangChain knows of, with where it sits in its trace: an open span, or a langsmith run tree a call was made from. */
type Parent = Pick<Span, "id" | "traceId" | "dottedOrder" | "name" | "tags" | "metadata">;

/**
 * What the async context holds while a traced runnable runs (LangChain puts
 * it there through `getRunTreeWithTracingConfig`): the span's place in its
 * trace, and enough of a langsmith run tree for code inside the runnable that
 * uses langsmith's `traceable`, whose runs nest under the span (the run tree
 * is built only then).
 */
class SpanContext {
  readonly tracingEnabled = true;
  extra: Record<string | symbol, unknown> = {};

  constructor(
    readonly id: string,
    readonly trace_id: string | undefined,
    readonly dotted_order: string | undefined,
    readonly name: string,
    private readonly tracer: SpanTracer,
  ) {}

  get client(): Client {
    return this.tracer.client;
  }

  get project_name(): string {
    return this.tracer.projectName;
  }

  createChild(config: RunTreeConfig): RunTree {
    const parent = new RunTree({
      id: this.id,
      name: this.name,
      trace_id: this.trace_id,
      dotted_order: this.dotted_order,
      client: this.tracer.client,
      project_name: this.tracer.projectName,
      tracingEnabled: true,
    });
    return parent.createChild(config);
  }

  /** The span itself is Berth's to send; a `traceable` asks only whether this looks like a run tree. */
  async postRun(): Promise<void> {}

  async end(): Promise<void> {}

  async patchRun(): Promise<void> {}
}

/**
 * Berth's tracer for one run: a callback handler keeping one compact record
 * per traced run (span) and handing it to the exporter, instead of the
 * langsmith run trees LangChainTracer builds and copies at every callback.
 *
 * Named `langchain_tracer` on purpose: that is how `@langchain/core` tells a
 * tracer is already there, so with LANGSMITH_TRACING=true it adds no default
 * one beside it, and how it asks the tracer for the context of a child run
 * (`getRunTreeWithTracingConfig`). It lacks `copyWithTracingConfig`, so
 * LangChain never takes it for a LangChainTracer to copy or merge.
 *
 * Its callbacks do no I/O, so they run inline (`awaitHandlers`), not queued.
 */
export class SpanTracer extends BaseCallbackHandler {
  readonly name = "langchain_tracer";
  private readonly spans = new Map<string, Parent>();
  private readonly open = new Map<string, Span>();

  /**
   * @param sampled false for a run left out by LANGSMITH_TRACING_SAMPLING_RATE: it records nothing, and is there
   *   only so that LangChain adds no tracer of its own.
   */
  constructor(
    private readonly defaults: SpanDefaults,
    private readonly exporter: SpanExporter,
    private readonly langsmithClient: () => Client,
    private readonly sampled = true,
  ) {
    super({ _awaitHandler: true });
  }

  /** A langsmith client for `traceable` runs nested in this run's spans (made on first use). */
  get client(): Client {
    return this.langsmithClient();
  }

  get projectName(): string {
    return this.defaults.project;
  }

  /** One handler serves the whole run (LangChain copies handlers when it configures a child). */
  override copy(): this {
    return this;
  }

  /** The async context of a child run of `id` (see SpanContext). */
  getRunTreeWithTracingConfig(id: string): SpanContext {
    const parent = this.spans.get(id);
    return new SpanContext(id, parent?.traceId, parent?.dottedOrder, parent?.name ?? "", this);
  }

  /** A LangChain call made inside a langsmith `traceable`: its run tree is the parent of the spans under it. */
  updateFromRunTree(runTree: { id?: string; trace_id?: string; dotted_order?: string; name?: string }): void {
    if (!runTree?.id || !runTree.trace_id || !runTree.dotted_order || this.spans.has(runTree.id)) return;
    this.spans.set(runTree.id, {
      id: runTree.id,
      traceId: runTree.trace_id,
      dottedOrder: runTree.dotted_order,
      name: runTree.name ?? "",
      tags: undefined,
      metadata: undefined,
    });
  }

  /** What langsmith's `RunTree.fromRunnableConfig` reads of a parent run (a `traceable` given a runnable config). */
  getRun(
    id: string,
  ): { id: string; name: string; trace_id: string; dotted_order: string; tags: string[]; extra: object } | undefined {
    const span = this.spans.get(id);
    if (!span) return undefined;
    return {
      id: span.id,
      name: span.name,
      trace_id: span.traceId,
      dotted_order: span.dottedOrder,
      tags: span.tags ?? [],
      extra: { metadata: { ...this.defaults.metadata, ...span.metadata } },
    };
  }

  private start(
    id: string,
    parentId: string | undefined,
    name: string,
    runType: string,
    inputs: unknown,
    tags: string[] | undefined,
    metadata: Record<string, unknown> | undefined,
    extra: Record<string, unknown> | undefined,
  ): void {
    if (!this.sampled) return;
    const startMicros = uniqueMicros();
    const segment = dottedSegment(startMicros, id);
    const parent = parentId === undefined ? undefined : this.spans.get(parentId);
    const span: Span = {
      id,
      // A parent this tracer never saw (LangChain's own tracer would do the same): the span starts a trace.
      parentId: parent ? parentId : undefined,
      traceId: parent ? parent.traceId : id,
      dottedOrder: parent ? `${parent.dottedOrder}.${segment}` : segment,
      name,
      runType,
      startMicros,
      inputs,
      // The callback manager's own arrays and objects: copied only where they may change after this call.
      tags: tags && tags.length > 0 ? tags.slice() : undefined,
      metadata,
      extra,
      defaults: this.defaults,
      state: "queued",
    };
    if (extra) {
      const policy = extra[TRACE_POLICY_KEY as unknown as string] as TracePolicy | undefined;
      if (policy) span.policy = policy;
      if (extra.lc_defers_inputs) span.inputsAtEnd = true;
    }
    this.spans.set(id, span);
    this.open.set(id, span);
    this.exporter.started(span);
  }

  private end(id: string, outputs: unknown, error: unknown, inputs?: unknown, usage?: Record<string, unknown>): void {
    const span = this.open.get(id);
    if (!span) return;
    this.open.delete(id);
    this.spans.delete(id);
    span.endMs = Date.now();
    if (outputs !== undefined) span.outputs = outputs;
    if (error !== undefined) span.error = errorText(error);
    if (inputs !== undefined) span.inputs = inputs;
    if (usage !== undefined) span.usage = usage;
    this.exporter.ended(span);
  }

  override handleChainStart(
    chain: Serialized,
    inputs: unknown,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runType?: string,
    runName?: string,
    extra?: Record<string, unknown>,
  ): void {
    this.start(runId, parentRunId, runName ?? lastId(chain), runType ?? "chain", inputs, tags, metadata, extra);
  }

  override handleChainEnd(
    outputs: unknown,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    kwargs?: { inputs?: unknown },
  ): void {
    this.end(runId, outputs, undefined, kwargs?.inputs);
  }

  override handleChainError(
    error: unknown,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    kwargs?: { inputs?: unknown },
  ): void {
    this.end(runId, undefined, error, kwargs?.inputs);
  }

  override handleLLMStart(
    llm: Serialized,
    prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.start(runId, parentRunId, runName ?? lastId(llm), "llm", { prompts }, tags, metadata, extraParams);
  }

  override handleChatModelStart(
    llm: Serialized,
    messages: unknown[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.start(runId, parentRunId, runName ?? lastId(llm), "llm", { messages }, tags, metadata, extraParams);
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    this.end(runId, output, undefined, undefined, usageOf(output));
  }

  override handleLLMError(error: unknown, runId: string): void {
    this.end(runId, undefined, error);
  }

  override handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    const extra = toolCallId === undefined ? undefined : { tool_call_id: toolCallId };
    this.start(runId, parentRunId, runName ?? lastId(tool), "tool", { input }, tags, metadata, extra);
  }

  override handleToolEnd(output: unknown, runId: string): void {
    this.end(runId, { output }, undefined);
  }

  override handleToolError(error: unknown, runId: string): void {
    this.end(runId, undefined, error);
  }

  override handleRetrieverStart(
    retriever: Serialized,
    query: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    name?: string,
  ): void {
    this.start(runId, parentRunId, name ?? lastId(retriever), "retriever", { query }, tags, metadata, undefined);
  }

  override handleRetrieverEnd(documents: unknown[], runId: string): void {
    this.end(runId, { documents }, undefined);
  }

  override handleRetrieverError(error: unknown, runId: string): void {
    this.end(runId, undefined, error);
  }
}

function lastId(serialized: Serialized | undefined): string {
  const id = serialized?.id;
  return Array.isArray(id) && id.length > 0 ? String(id[id.length - 1]) : "Unnamed";
}

type Usage = Record<string, unknown>;

/** The usage_metadata of an LLM run's generated messages, summed (what LangChainTracer reports for LangSmith). */
function usageOf(output: LLMResult | undefined): Usage | undefined {
  let total: Usage | undefined;
  for (const batch of output?.generations ?? []) {
    for (const generation of batch) {
      const usage = (generation as { message?: { usage_metadata?: Usage } }).message?.usage_metadata;
      if (usage && typeof usage === "object") total = total ? addUsage(total, usage) : { ...usage };
    }
  }
  return total;
}

/** Numbers added key by key, nested details too. */
function addUsage(into: Usage, more: Usage): Usage {
  for (const [key, value] of Object.entries(more)) {
    const current = into[key];
    if (typeof value === "number") into[key] = (typeof current === "number" ? current : 0) + value;
    else if (value && typeof value === "object")
      into[key] = addUsage(current && typeof current === "object" ? { ...(current as Usage) } : {}, value as Usage);
  }
  return into;
}
