import type { JsonObject } from "../storage/tracing-types.js";

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);
const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;

/** One usage object, whichever naming it uses (LangChain's usage_metadata, OpenAI's, the JS camelCase one). */
function readUsage(usage: unknown): TokenUsage | undefined {
  if (!isObject(usage)) return undefined;
  const prompt = count(usage.input_tokens ?? usage.prompt_tokens ?? usage.promptTokens);
  const completion = count(usage.output_tokens ?? usage.completion_tokens ?? usage.completionTokens);
  const total = count(usage.total_tokens ?? usage.totalTokens);
  if (prompt === undefined && completion === undefined && total === undefined) return undefined;
  return {
    prompt_tokens: prompt ?? 0,
    completion_tokens: completion ?? 0,
    total_tokens: total ?? (prompt ?? 0) + (completion ?? 0),
  };
}

/** The usage_metadata of the AI messages in an LLMResult's generations, summed (a serialized message keeps it in kwargs). */
function generationsUsage(generations: unknown): TokenUsage | undefined {
  if (!Array.isArray(generations)) return undefined;
  let sum: TokenUsage | undefined;
  for (const generation of generations.flat()) {
    const message = isObject(generation) ? generation.message : undefined;
    const usage = isObject(message)
      ? readUsage(message.usage_metadata ?? (isObject(message.kwargs) ? message.kwargs.usage_metadata : undefined))
      : undefined;
    if (!usage) continue;
    sum = sum
      ? {
          prompt_tokens: sum.prompt_tokens + usage.prompt_tokens,
          completion_tokens: sum.completion_tokens + usage.completion_tokens,
          total_tokens: sum.total_tokens + usage.total_tokens,
        }
      : usage;
  }
  return sum;
}

/**
 * The token usage a run reports, where the clients put it: LangChainTracer
 * copies a chat model's usage into `extra.metadata.usage_metadata`;
 * `traceable` LLM runs return `outputs.usage_metadata`; LLMResults carry
 * `llm_output.token_usage` (or `tokenUsage`, `usage`) and messages with
 * usage_metadata. The first found wins: they describe the same call.
 */
export function tokenUsage(outputs: JsonObject | null, extra: JsonObject | null): TokenUsage | undefined {
  const metadata = isObject(extra?.metadata) ? extra.metadata : undefined;
  const llmOutput = isObject(outputs?.llm_output) ? outputs.llm_output : undefined;
  return (
    readUsage(metadata?.usage_metadata) ??
    readUsage(outputs?.usage_metadata) ??
    readUsage(llmOutput?.token_usage) ??
    readUsage(llmOutput?.tokenUsage) ??
    readUsage(llmOutput?.usage) ??
    generationsUsage(outputs?.generations)
  );
}

/** The conversation a run belongs to: the metadata keys LangSmith groups threads by, in its order. */
export function threadIdOf(extra: JsonObject | null): string | null {
  const metadata = isObject(extra?.metadata) ? extra.metadata : undefined;
  for (const key of ["thread_id", "session_id", "conversation_id"]) {
    const value = metadata?.[key];
    // No U+0000 in a text column (PostgreSQL refuses it).
    if (typeof value === "string" && value !== "") return value.replaceAll("\u0000", "");
    if (typeof value === "number") return String(value);
  }
  return null;
}
