/**
 * What the langsmith client sends (lib/client.ts of langsmith 0.12): run
 * creates and updates, feedback. Objects are loose: the client adds fields
 * over versions (serialized, child_runs, address, attachments…) and a trace
 * must not be refused for one Berth does not keep.
 */
import { z } from "zod";

/** Any UUID (the clients' uuid7 and uuid4, and others'), lower-cased so ids compare as LangSmith's do. */
export const Uuid = z.guid({ message: "must be a UUID" }).transform((id) => id.toLowerCase());

/** Text columns cannot hold U+0000 in PostgreSQL; it is dropped (as jsonb() does in JSON) on both backends alike. */
export const CleanText = z.string().transform((value) => value.replaceAll("\u0000", ""));

const HAS_ZONE = /(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A time as the clients send it: epoch milliseconds (createRun's default) or
 * an ISO string, which the Python client writes without a zone for UTC.
 * Stored as ISO with milliseconds, the precision both backends keep.
 */
export const WireTime = z.union([z.number(), z.string()]).transform((value, context) => {
  const date = typeof value === "number" ? new Date(value) : new Date(HAS_ZONE.test(value.trim()) ? value : `${value}Z`);
  if (Number.isNaN(date.getTime())) {
    context.addIssue({ code: "custom", message: "must be an ISO 8601 date-time or epoch milliseconds" });
    return z.NEVER;
  }
  return date.toISOString();
});

export const JsonRecord = z.record(z.string(), z.unknown());

/** `error` is a string (a message or traceback); anything else is kept as its JSON text. */
const RunError = z
  .unknown()
  .transform((value) =>
    value === undefined || value === null ? value : typeof value === "string" ? value : JSON.stringify(value),
  )
  .pipe(CleanText.nullish())
  .optional();

const runFields = {
  id: Uuid.optional(),
  name: CleanText.nullish(),
  run_type: CleanText.nullish(),
  start_time: WireTime.nullish(),
  end_time: WireTime.nullish(),
  inputs: JsonRecord.nullish(),
  outputs: JsonRecord.nullish(),
  error: RunError,
  extra: JsonRecord.nullish(),
  tags: z.array(CleanText).nullish(),
  events: z.array(z.unknown()).nullish(),
  parent_run_id: Uuid.nullish(),
  trace_id: Uuid.nullish(),
  dotted_order: CleanText.nullish(),
  reference_example_id: Uuid.nullish(),
  /** The project by name (created when missing) or by id. */
  session_name: CleanText.nullish(),
  session_id: Uuid.nullish(),
};

/** A run create: `name` and `run_type` are required, as by LangSmith. */
export const RunCreate = z.looseObject({ ...runFields, name: CleanText, run_type: CleanText });
export type RunCreate = z.infer<typeof RunCreate>;

/** A run update: any subset (a patch may arrive before its post). */
export const RunUpdate = z.looseObject(runFields);
export type RunUpdate = z.infer<typeof RunUpdate>;

/** POST /runs/batch: what batchIngestRuns sends. */
export const RunBatch = z.looseObject({
  post: z.array(RunCreate).nullish(),
  patch: z.array(RunUpdate.extend({ id: Uuid })).nullish(),
});

/** Feedback as createFeedback sends it (to POST /feedback, or as a multipart `feedback.<id>` part). */
export const FeedbackCreate = z.looseObject({
  id: Uuid.optional(),
  run_id: Uuid.nullish(),
  trace_id: Uuid.nullish(),
  key: CleanText.pipe(z.string().min(1, { message: "must not be empty" })),
  score: z.union([z.number(), z.boolean()]).nullish(),
  value: z.unknown().optional(),
  correction: z.unknown().optional(),
  comment: CleanText.nullish(),
  feedback_source: z.looseObject({ type: CleanText.nullish(), metadata: JsonRecord.nullish() }).nullish(),
  session_id: Uuid.nullish(),
});
export type FeedbackCreate = z.infer<typeof FeedbackCreate>;
