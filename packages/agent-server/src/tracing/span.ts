/**
 * A traced run (a span) as Berth's tracer keeps it: the references LangChain
 * handed to the callbacks, turned into wire JSON only when the span is sent
 * (span-export.ts), so a run pays for a few object fields per span.
 */

/** What a run's metadata gets on every span (the run's ids and attempt), and where its spans go. */
export interface SpanDefaults {
  metadata: Record<string, unknown>;
  project: string;
}

/** `processInputs` / `processOutputs` of a LangChain trace policy (`Symbol.for("langchain.trace_policy")` in `extra`). */
export interface TracePolicy {
  processInputs?: (inputs: unknown) => unknown;
  processOutputs?: (outputs: unknown) => unknown;
}

/**
 * Where a span stands with the exporter: `queued` (its first operation, a post
 * complete if the span has ended by then, not sent yet), `posted` (posted while
 * open: its end goes out as a patch), `done` (everything sent, or dropped).
 */
export type SpanState = "queued" | "posted" | "done";

export interface Span {
  id: string;
  parentId: string | undefined;
  traceId: string;
  dottedOrder: string;
  name: string;
  runType: string;
  /** Epoch microseconds (unique and increasing in this process: the dotted order's time). */
  startMicros: number;
  /** Epoch milliseconds. */
  endMs?: number;
  inputs?: unknown;
  outputs?: unknown;
  error?: string;
  /** LangChain's `extra` of the run (invocation params, tool call id…), without metadata. */
  extra?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  tags?: string[];
  /** Token usage summed from an LLM run's generations (LangSmith reads it from `extra.metadata.usage_metadata`). */
  usage?: Record<string, unknown>;
  /** Inputs given at the end (a streaming chain that defers them): sent with the end. */
  inputsAtEnd?: boolean;
  policy?: TracePolicy;
  defaults: SpanDefaults;
  state: SpanState;
}

let lastMicros = 0;

/** Now in epoch microseconds, never twice the same: spans started in one millisecond keep their order. */
export function uniqueMicros(): number {
  const now = Date.now() * 1000;
  lastMicros = now > lastMicros ? now : lastMicros + 1;
  return lastMicros;
}

/** The last millisecond isoMicros wrote, as `toISOString` without its `Z`: a run's spans start and end in few. */
let lastMs = Number.NaN;
let lastIso = "";

/** `2026-11-28T21:00:00.123456Z` */
export function isoMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString().slice(0, 23);
  }
  return `${lastIso}${String(micros - ms * 1000).padStart(3, "0")}Z`;
}

/** One segment of a dotted order, as LangSmith writes it: `20261128T210000123456Z` followed by the run id. */
export function dottedSegment(micros: number, id: string): string {
  const iso = isoMicros(micros);
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 26)}Z${id}`;
}
