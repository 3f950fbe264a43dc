import type { Span } from "./span.js";
import { isoMicros } from "./span.js";

/**
 * The wire JSON of spans, as `POST /runs/batch` takes them (docs/tracing.md):
 * built as text, field by field, so a value that does not serialise (a cycle,
 * a BigInt) costs its own field a fallback instead of the whole batch.
 */

/** JSON text of any value: cycles become "[Circular]", BigInts strings, what has no JSON null. */
export function jsonOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return JSON.stringify(value, safeReplacer()) ?? "null";
  }
}

function safeReplacer(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key: string, value: unknown) {
    if (typeof value === "bigint") return value.toString();
    if (typeof value !== "object" || value === null) return value;
    // `this` is the object holding the value: the ancestors past it are done with.
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return "[Circular]";
    ancestors.push(value);
    return value;
  };
}

/**
 * What LangChain objects (messages) serialise to, within one batch: a run's spans carry the same messages again and
 * again (the graph's input in every node's, each model call's in its node's output and the next node's input), and
 * LangChain's `toJSON` of a message (snake-cased keys, aliases, secrets escaped) costs more than its JSON text.
 * Made per batch, while nothing else runs: no message changes while it is kept.
 */
export type SerializedObjects = Map<object, unknown>;

interface LangChainSerializable {
  lc_serializable: unknown;
  toJSON(): unknown;
}

function isLangChainSerializable(value: unknown): value is LangChainSerializable {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Partial<LangChainSerializable>).lc_serializable === true &&
    typeof (value as Partial<LangChainSerializable>).toJSON === "function"
  );
}

/**
 * `payload` with the LangChain objects in its top levels (a state's `messages`, a model call's list of message lists)
 * replaced by what they serialise to, each serialised once per batch; the payload itself when it has none. Deeper
 * ones serialise as JSON.stringify meets them.
 */
function withSerializedObjects(payload: unknown, serialized: SerializedObjects, levels = 3): unknown {
  if (typeof payload !== "object" || payload === null) return payload;
  if (isLangChainSerializable(payload)) {
    let json = serialized.get(payload);
    if (json === undefined) serialized.set(payload, (json = payload.toJSON()));
    return json;
  }
  if (levels === 0) return payload;
  if (Array.isArray(payload)) {
    let copy: unknown[] | undefined;
    payload.forEach((item, i) => {
      const replaced = withSerializedObjects(item, serialized, levels - 1);
      if (replaced !== item) (copy ??= payload.slice())[i] = replaced;
    });
    return copy ?? payload;
  }
  if (Object.getPrototypeOf(payload) !== Object.prototype || "toJSON" in payload) return payload;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(payload)) {
    const replaced = withSerializedObjects(item, serialized, levels - 1);
    if (replaced !== item) (copy ??= { ...payload })[key] = replaced;
  }
  return copy ?? payload;
}

/** A payload (inputs, outputs) as a JSON object, as the tracing service requires: anything else under `key`. */
function objectJson(value: unknown, key: string, serialized: SerializedObjects): string {
  const json = jsonOf(value === undefined ? {} : withSerializedObjects(value, serialized));
  return json.startsWith("{") ? json : `{${JSON.stringify(key)}:${json}}`;
}

/** A trace policy's processor applied; a processor that throws leaves an empty payload and its error on the span. */
function applyPolicy(
  process: ((payload: unknown) => unknown) | undefined,
  payload: unknown,
): { payload: unknown; error?: unknown } {
  if (!process) return { payload };
  try {
    return { payload: process(payload) };
  } catch (error) {
    return { payload: {}, error };
  }
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message + (error.stack ? `\n\n${error.stack}` : "");
  return typeof error === "string" ? error : String(error);
}

/** `extra` with the run's metadata: the span's own keys win over the run's defaults (its ids and attempt). */
function extraJson(span: Span, withUsage: boolean): string {
  const metadata = { ...span.defaults.metadata, ...span.metadata };
  if (withUsage && span.usage) metadata.usage_metadata = span.usage;
  return jsonOf({ ...span.extra, metadata });
}

/**
 * The post of a span: everything it has so far (a span that ended is sent
 * whole, with no patch after it).
 */
export function postJson(span: Span, serialized: SerializedObjects): string {
  const ended = span.endMs !== undefined;
  let policyError: unknown;
  const parts = [
    `"id":"${span.id}"`,
    `"trace_id":"${span.traceId}"`,
    `"dotted_order":${JSON.stringify(span.dottedOrder)}`,
    `"name":${JSON.stringify(span.name)}`,
    `"run_type":${JSON.stringify(span.runType)}`,
    `"start_time":"${isoMicros(span.startMicros)}"`,
    `"session_name":${JSON.stringify(span.defaults.project)}`,
  ];
  if (span.parentId) parts.push(`"parent_run_id":"${span.parentId}"`);
  if (span.tags && span.tags.length > 0) parts.push(`"tags":${jsonOf(span.tags)}`);
  if (!span.inputsAtEnd || ended) {
    const inputs = applyPolicy(span.policy?.processInputs, span.inputs);
    policyError ??= inputs.error;
    parts.push(`"inputs":${objectJson(inputs.payload, "input", serialized)}`);
  }
  if (ended) parts.push(...endParts(span, policyError, serialized));
  else parts.push(`"extra":${extraJson(span, false)}`);
  return `{${parts.join(",")}}`;
}

/** The patch of a span posted while open: its end. */
export function patchJson(span: Span, serialized: SerializedObjects): string {
  const parts = [`"id":"${span.id}"`, `"trace_id":"${span.traceId}"`, `"dotted_order":${JSON.stringify(span.dottedOrder)}`];
  if (span.parentId) parts.push(`"parent_run_id":"${span.parentId}"`);
  let policyError: unknown;
  if (span.inputsAtEnd) {
    const inputs = applyPolicy(span.policy?.processInputs, span.inputs);
    policyError = inputs.error;
    parts.push(`"inputs":${objectJson(inputs.payload, "input", serialized)}`);
  }
  parts.push(...endParts(span, policyError, serialized));
  return `{${parts.join(",")}}`;
}

function endParts(span: Span, policyError: unknown, serialized: SerializedObjects): string[] {
  const parts = [`"end_time":"${new Date(span.endMs!).toISOString()}"`];
  if (span.outputs !== undefined) {
    const outputs = applyPolicy(span.policy?.processOutputs, span.outputs);
    policyError ??= outputs.error;
    parts.push(`"outputs":${objectJson(outputs.payload, "output", serialized)}`);
  }
  const error = span.error ?? (policyError === undefined ? undefined : errorText(policyError));
  if (error !== undefined) parts.push(`"error":${JSON.stringify(error)}`);
  parts.push(`"extra":${extraJson(span, true)}`);
  return parts;
}
