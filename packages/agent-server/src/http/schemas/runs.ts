import { z } from "zod";
import { STREAM_MODES } from "../../runs/streaming/stream-modes.js";
import { isOwnRoutePath } from "../../config/webhook-url-policy.js";
import { CheckpointSelector, JsonObject, QueryBoolean, Uuid } from "./common.js";

const NodeList = z.union([z.literal("*"), z.array(z.string())]);

const StreamMode = z.enum(STREAM_MODES);

const Goto = z.union([z.string(), z.object({ node: z.string(), input: z.unknown() })]);

export const RunCommand = z.object({
  resume: z.unknown().optional(),
  update: z.union([JsonObject, z.array(z.tuple([z.string(), z.unknown()]))]).nullish(),
  goto: z.union([Goto, z.array(Goto)]).nullish(),
});

export const RunCreate = z.object({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  command: RunCommand.nullish(),
  config: JsonObject.nullish(),
  context: JsonObject.nullish(),
  metadata: JsonObject.nullish(),
  checkpoint: CheckpointSelector.nullish(),
  checkpoint_id: z.string().nullish(),
  interrupt_before: NodeList.nullish(),
  interrupt_after: NodeList.nullish(),
  stream_mode: z
    .union([StreamMode, z.array(StreamMode)])
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

export const Run = z.object({
  run_id: Uuid,
  thread_id: Uuid,
  assistant_id: Uuid,
  created_at: z.string(),
  updated_at: z.string(),
  status: z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]),
  metadata: JsonObject,
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]),
  kwargs: JsonObject,
});

export const RunParams = z.object({ thread_id: Uuid, run_id: Uuid });

export const StatelessRunParams = z.object({ run_id: Uuid });

export const RunListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]).optional(),
});

export const CancelQuery = z.object({
  wait: QueryBoolean.default(false),
  action: z.enum(["interrupt", "rollback"]).default("interrupt"),
});

export const CancelManyBody = z
  .object({
    thread_id: Uuid.optional(),
    run_ids: z.array(Uuid).min(1).optional(),
    status: z.enum(["pending", "running", "all"]).optional(),
  })
  .refine((body) => body.thread_id || body.run_ids || body.status, {
    message: "give thread_id, run_ids or status",
  });

export const CancelManyQuery = z.object({ action: z.enum(["interrupt", "rollback"]).default("interrupt") });

export const JoinStreamQuery = z.object({
  cancel_on_disconnect: QueryBoolean.default(false),
  stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
});

export const ThreadStreamQuery = z.object({
  stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
});
