import { z } from "zod";
import { isTimezone, scheduleError } from "../../services/cron-schedule.js";
import { JsonObjectSchema, Limit, OffsetSchema, SortOrderSchema, UuidSchema } from "./common.js";
import { RunCreateSchema } from "./runs.js";

const ScheduleSchema = z.string().superRefine((schedule, context) => {
  const error = scheduleError(schedule);
  if (error) context.addIssue({ code: "custom", message: error });
});

const TimezoneSchema = z.string().refine(isTimezone, { message: "must be an IANA timezone, e.g. Europe/Paris" });

const EndTimeSchema = z.iso.datetime({
  offset: true,
  message: "must be an ISO 8601 date-time with a timezone, e.g. 2030-01-01T00:00:00Z",
});

const RunCompletionSchema = z.enum(["delete", "keep"]);

/** The fields of a run's body a cron gives its runs (with a run's defaults). */
const CronRunBodySchema = RunCreateSchema.pick({
  input: true,
  config: true,
  context: true,
  metadata: true,
  webhook: true,
  multitask_strategy: true,
  interrupt_before: true,
  interrupt_after: true,
  stream_mode: true,
  stream_subgraphs: true,
  stream_resumable: true,
  durability: true,
});

export const CronCreateSchema = CronRunBodySchema.extend({
  assistant_id: z.string().min(1),
  schedule: ScheduleSchema,
  timezone: TimezoneSchema.nullish(),
  end_time: EndTimeSchema.nullish(),
  enabled: z.boolean().default(true),
  /** Stateless crons: what becomes of a run's thread once the run ended (ignored on a thread cron). */
  on_run_completed: RunCompletionSchema.nullish(),
});

// No defaults: an absent field stays as it is.
export const CronPatchSchema = z.object({
  schedule: ScheduleSchema.optional(),
  timezone: TimezoneSchema.nullable().optional(), // null: back to UTC
  end_time: EndTimeSchema.nullable().optional(),
  enabled: z.boolean().optional(),
  on_run_completed: RunCompletionSchema.optional(),
  input: z.unknown().optional(),
  config: JsonObjectSchema.optional(),
  context: JsonObjectSchema.optional(),
  metadata: JsonObjectSchema.optional(),
  webhook: RunCreateSchema.shape.webhook.optional(),
  interrupt_before: RunCreateSchema.shape.interrupt_before.optional(),
  interrupt_after: RunCreateSchema.shape.interrupt_after.optional(),
  stream_mode: RunCreateSchema.shape.stream_mode.optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  durability: RunCreateSchema.shape.durability.optional(),
});

export const CronSchema = z.object({
  cron_id: UuidSchema,
  assistant_id: z.string(),
  thread_id: UuidSchema.nullable(),
  on_run_completed: RunCompletionSchema.nullable(),
  end_time: z.string().nullable(),
  schedule: z.string(),
  timezone: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  payload: JsonObjectSchema,
  user_id: z.string().nullable(),
  next_run_date: z.string().nullable(),
  metadata: JsonObjectSchema,
  enabled: z.boolean(),
});

export const CronIdParamsSchema = z.object({ cron_id: UuidSchema });

export const CRON_SELECT_FIELDS = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "end_time",
  "schedule",
  "created_at",
  "updated_at",
  "user_id",
  "payload",
  "next_run_date",
  "metadata",
  "now",
  "timezone",
  "enabled",
  "on_run_completed",
] as const;

const CronFilterSchema = z.object({
  assistant_id: z.string().optional(),
  thread_id: UuidSchema.optional(),
  metadata: JsonObjectSchema.optional(),
});

export const CronSearchSchema = CronFilterSchema.extend({
  enabled: z.boolean().optional(),
  limit: Limit(1000, 10),
  offset: OffsetSchema,
  sort_by: z.enum(["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"]).default("created_at"),
  sort_order: SortOrderSchema.default("desc"),
  /** Only these fields of each cron (`now`: the server's time). */
  select: z.array(z.enum(CRON_SELECT_FIELDS)).min(1).optional(),
});

export const CronCountSchema = CronFilterSchema;
