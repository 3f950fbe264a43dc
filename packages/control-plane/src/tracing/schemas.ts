/** Request and response schemas of the tracing routes that are Berth's own (tokens, reads); wire.ts has the ingestion ones. */
import { z } from "zod";
import { CleanText, JsonRecord, Uuid } from "./wire.js";

const Timestamp = z.string().describe("ISO 8601 date-time");
const Count = z.number().finite().min(0);

/** createPresignedFeedbackToken's body: `expires_at`, or `expires_in` (a TimeDelta), or neither (BERTH_FEEDBACK_TOKEN_TTL_SECONDS). */
export const TokenRequest = z.looseObject({
  run_id: Uuid,
  feedback_key: CleanText.pipe(z.string().min(1, { message: "must not be empty" })),
  expires_at: z.iso.datetime({ offset: true, local: true, message: "must be an ISO 8601 date-time" }).nullish(),
  expires_in: z
    .looseObject({ days: Count.optional(), hours: Count.optional(), minutes: Count.optional(), seconds: Count.optional() })
    .nullish(),
  feedback_config: JsonRecord.nullish(),
});
export type TokenRequest = z.infer<typeof TokenRequest>;

export const FeedbackToken = z.object({ id: z.string(), url: z.string(), expires_at: Timestamp });

const Score = z.union([z.number(), z.boolean()]).nullish();

/** POST to a feedback URL: the JSON fields of a submission, nothing else. */
export const TokenFeedbackBody = z.strictObject({
  score: Score,
  value: z.unknown().optional(),
  comment: CleanText.nullish(),
  correction: z.unknown().optional(),
  metadata: JsonRecord.nullish(),
});
export type TokenFeedbackInput = z.infer<typeof TokenFeedbackBody>;

/** A query value that may be JSON-encoded (`{"a":1}`, `3`, `true`), else the text itself. */
const JsonOrText = z.string().transform((text): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
});

/** GET of a feedback URL: the same fields as query parameters, objects JSON-encoded. */
export const TokenFeedbackQuery = z.strictObject({
  score: z
    .string()
    .transform((text) => (text === "true" ? 1 : text === "false" ? 0 : text.trim() === "" ? Number.NaN : Number(text)))
    .pipe(z.number({ message: "must be a number" }).finite())
    .optional(),
  value: JsonOrText.optional(),
  comment: CleanText.optional(),
  correction: JsonOrText.optional(),
  metadata: z
    .string()
    .transform((text, context): Record<string, unknown> => {
      try {
        const value: unknown = JSON.parse(text);
        if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
      } catch {
        // reported below
      }
      context.addIssue({ code: "custom", message: "must be a JSON-encoded object" });
      return z.NEVER;
    })
    .optional(),
});

export const Feedback = z.object({
  id: z.string(),
  run_id: z.string(),
  trace_id: z.string().nullable(),
  key: z.string(),
  score: z.number().nullable(),
  value: z.unknown(),
  comment: z.string().nullable(),
  correction: z.unknown(),
  metadata: JsonRecord.nullable(),
  source: z.string(),
  feedback_source: z.object({ type: z.string(), metadata: JsonRecord.nullable() }),
  created_at: Timestamp,
});

export const ProjectParams = z.object({ project: z.string().min(1).describe("Project id or name") });
export const RunParams = z.object({ run_id: Uuid });

const QueryBoolean = z
  .string()
  .toLowerCase()
  .pipe(z.enum(["true", "false", "1", "0", "yes", "no"]))
  .transform((value) => ["true", "1", "yes"].includes(value));

const limit = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);
const offset = z.coerce.number().int().min(0).default(0);

const Milliseconds = z.coerce.number().finite().min(0);

export const RunListQuery = z.strictObject({
  thread_id: z.string().min(1).optional(),
  trace_id: Uuid.optional(),
  root_only: QueryBoolean.default(false),
  status: z.enum(["success", "error", "pending"]).optional(),
  error: QueryBoolean.optional().describe("true: only runs with an error; false: only runs without"),
  name: z.string().min(1).optional(),
  min_latency_ms: Milliseconds.optional(),
  max_latency_ms: Milliseconds.optional(),
  order: z.enum(["asc", "desc"]).default("desc"),
  limit: limit(1000, 100),
  offset,
});

export const PageQuery = z.strictObject({ limit: limit(1000, 100), offset });

export const SpanPageQuery = z.strictObject({ limit: limit(5000, 1000), offset });

export const Span = z.object({
  id: z.string(),
  parent_run_id: z.string().nullable(),
  dotted_order: z.string().nullable(),
  depth: z.int().describe("0 for the run asked for, 1 for its children…"),
  name: z.string().nullable(),
  run_type: z.string().nullable(),
  status: z.enum(["pending", "success", "error"]),
  start_time: Timestamp.nullable(),
  end_time: Timestamp.nullable(),
  error: z.string().nullable().describe("Its first 500 characters"),
  prompt_tokens: z.number().nullable(),
  completion_tokens: z.number().nullable(),
  total_tokens: z.number().nullable(),
  prompt_cost: z.number().nullable(),
  completion_cost: z.number().nullable(),
  total_cost: z.number().nullable(),
});

export const SpanPage = z.object({
  resources: z.array(Span),
  offset: z.int().describe("The next page's"),
  total: z.int().describe("Spans of the trace in all"),
});

export const Project = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  deployment_id: z.string().nullable(),
  created_at: Timestamp,
});

export const Run = z.looseObject({
  id: z.string(),
  trace_id: z.string(),
  parent_run_id: z.string().nullable(),
  dotted_order: z.string().nullable(),
  project_id: z.string(),
  session_id: z.string(),
  name: z.string().nullable(),
  run_type: z.string().nullable(),
  status: z.enum(["pending", "success", "error"]),
  start_time: Timestamp.nullable(),
  end_time: Timestamp.nullable(),
  inputs: JsonRecord.nullable(),
  outputs: JsonRecord.nullable(),
  error: z.string().nullable(),
  extra: JsonRecord.nullable(),
  tags: z.array(z.string()).nullable(),
  events: z.array(z.unknown()).nullable(),
  prompt_tokens: z.number().nullable(),
  completion_tokens: z.number().nullable(),
  total_tokens: z.number().nullable(),
  thread_id: z.string().nullable(),
});

export const ThreadUsage = z.object({
  project_id: z.string(),
  thread_id: z.string(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  runs: z.number().describe("LLM runs counted"),
  traces: z.number().describe("Root runs of the thread"),
});
