import { z } from "zod";
import { STREAM_MODES } from "../../runs/streaming/stream-modes.js";
import { isOwnRoutePath } from "../../config/webhook-url-policy.js";
import { CheckpointSelectorSchema, JsonObjectSchema, QueryBooleanSchema, UuidSchema } from "./common.js";

const NodeListSchema = z.union([z.literal("*"), z.array(z.string())]);

const StreamModeSchema = z.enum(STREAM_MODES);

const GotoSchema = z.union([z.string(), z.object({ node: z.string(), input: z.unknown() })]);

export const RunCommandSchema = z.object({
  resume: z.unknown().optional(),
  update: z.union([JsonObjectSchema, z.array(z.tuple([z.string(), z.unknown()]))]).nullish(),
  goto: z.union([GotoSchema, z.array(GotoSchema)]).nullish(),
});

export const RunCreateSchema = z.object({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  command: RunCommandSchema.nullish(),
  config: JsonObjectSchema.nullish(),
  context: JsonObjectSchema.nullish(),
  metadata: JsonObjectSchema.nullish(),
  checkpoint: CheckpointSelectorSchema.nullish(),
  checkpoint_id: z.string().nullish(),
  interrupt_before: NodeListSchema.nullish(),
  interrupt_after: NodeListSchema.nullish(),
  stream_mode: z
    .union([StreamModeSchema, z.array(StreamModeSchema)])
    .default(["values"])
    .transform((mode) => (Array.isArray(mode) ? (mode.length ? mode : ["values" as const]) : [mode])),
  stream_subgraphs: z.boolean().default(false),
  stream_resumable: z.boolean().default(false),
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).default("reject"),
  if_not_exists: z.enum(["reject", "create"]).default("reject"),
  after_seconds: z.number().min(0).nullish(),
  on_completion: z.enum(["delete", "keep"]).nullish(),
  on_disconnect: z.enum(["cancel", "continue"]).default("continue"),
  webhook: z
    .union([z.url({ protocol: /^https?$/ }), z.string().refine(isOwnRoutePath)], {
      error: "must be an http(s) URL, or a path of the project's http.app starting with /",
    })
    .nullish(),
  durability: z.enum(["sync", "async", "exit"]).nullish(),
  feedback_keys: z.array(z.string()).nullish(),
});

export const RunSchema = z.object({
  run_id: UuidSchema,
  thread_id: UuidSchema,
  assistant_id: UuidSchema,
  created_at: z.string(),
  updated_at: z.string(),
  status: z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]),
  metadata: JsonObjectSchema,
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]),
  kwargs: JsonObjectSchema,
});

export const RunParamsSchema = z.object({ thread_id: UuidSchema, run_id: UuidSchema });

export const StatelessRunParamsSchema = z.object({ run_id: UuidSchema });

export const RunListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]).optional(),
});

export const CancelQuerySchema = z.object({
  wait: QueryBooleanSchema.default(false),
  action: z.enum(["interrupt", "rollback"]).default("interrupt"),
});

export const CancelManyBodySchema = z
  .object({
    thread_id: UuidSchema.optional(),
    run_ids: z.array(UuidSchema).min(1).optional(),
    status: z.enum(["pending", "running", "all"]).optional(),
  })
  .refine((body) => body.thread_id || body.run_ids || body.status, {
    message: "give thread_id, run_ids or status",
  });

export const CancelManyQuerySchema = z.object({ action: z.enum(["interrupt", "rollback"]).default("interrupt") });

export const JoinStreamQuerySchema = z.object({
  cancel_on_disconnect: QueryBooleanSchema.default(false),
  stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
});

export const ThreadStreamQuerySchema = z.object({
  stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
});
