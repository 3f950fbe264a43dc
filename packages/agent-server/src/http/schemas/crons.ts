import { z } from "zod";
import { isTimezone, scheduleError } from "../../services/cron-schedule.js";
import { JsonObject, Limit, Offset, SortOrder, Uuid } from "./common.js";
import { RunCreate } from "./runs.js";

const Schedule = z.string().superRefine((schedule, context) => {
  const error = scheduleError(schedule);
  if (error) context.addIssue({ code: "custom", message: error });
});

const Timezone = z.string().refine(isTimezone, { message: "must be an IANA timezone, e.g. Europe/Paris" });

const EndTime = z.iso.datetime({
  offset: true,
  message: "must be an ISO 8601 date-time with a timezone, e.g. 2030-01-01T00:00:00Z",
});

const RunCompletion = z.enum(["delete", "keep"]);

/** The fields of a run's body a cron gives its runs (with a run's defaults). */
const CronRunBody = RunCreate.pick({
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

export const CronCreate = CronRunBody.extend({
  assistant_id: z.string().min(1),
  schedule: Schedule,
  timezone: Timezone.nullish(),
  end_time: EndTime.nullish(),
  enabled: z.boolean().default(true),
  /** Stateless crons: what becomes of a run's thread once the run ended (ignored on a thread cron). */
  on_run_completed: RunCompletion.nullish(),
});

// No defaults: an absent field stays as it is.
export const CronPatch = z.object({
  schedule: Schedule.optional(),
  timezone: Timezone.nullable().optional(), // null: back to UTC
  end_time: EndTime.nullable().optional(),
  enabled: z.boolean().optional(),
  on_run_completed: RunCompletion.optional(),
  input: z.unknown().optional(),
  config: JsonObject.optional(),
  context: JsonObject.optional(),
  metadata: JsonObject.optional(),
  webhook: RunCreate.shape.webhook.optional(),
  interrupt_before: RunCreate.shape.interrupt_before.optional(),
  interrupt_after: RunCreate.shape.interrupt_after.optional(),
  stream_mode: RunCreate.shape.stream_mode.optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  durability: RunCreate.shape.durability.optional(),
});

export const Cron = z.object({
  cron_id: Uuid,
  assistant_id: z.string(),
  thread_id: Uuid.nullable(),
  on_run_completed: RunCompletion.nullable(),
  end_time: z.string().nullable(),
  schedule: z.string(),
  timezone: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  payload: JsonObject,
  user_id: z.string().nullable(),
  next_run_date: z.string().nullable(),
  metadata: JsonObject,
  enabled: z.boolean(),
});

export const CronIdParams = z.object({ cron_id: Uuid });

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

const CronFilter = z.object({
  assistant_id: z.string().optional(),
  thread_id: Uuid.optional(),
  metadata: JsonObject.optional(),
});

export const CronSearch = CronFilter.extend({
  enabled: z.boolean().optional(),
  limit: Limit(1000, 10),
  offset: Offset,
  sort_by: z.enum(["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"]).default("created_at"),
  sort_order: SortOrder.default("desc"),
  /** Only these fields of each cron (`now`: the server's time). */
  select: z.array(z.enum(CRON_SELECT_FIELDS)).min(1).optional(),
});

export const CronCount = CronFilter;
