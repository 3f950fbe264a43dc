import { z } from "zod";
import {
  CheckpointSelectorSchema,
  JsonObjectSchema,
  Limit,
  OffsetSchema,
  QueryBooleanSchema,
  SortOrderSchema,
  ThreadStatusSchema,
  UuidSchema,
} from "./common.js";

export const ThreadIdParamsSchema = z.object({ thread_id: UuidSchema });

export const ThreadSchema = z.object({
  thread_id: UuidSchema,
  created_at: z.string(),
  updated_at: z.string(),
  metadata: JsonObjectSchema,
  status: ThreadStatusSchema,
  config: JsonObjectSchema,
  values: JsonObjectSchema.nullable(),
  interrupts: z.record(z.string(), z.array(z.object({ id: z.string().optional(), value: z.unknown() }))),
});

const SuperstepUpdateSchema = z.object({
  values: z.unknown().optional(),
  command: JsonObjectSchema.nullable().optional(),
  as_node: z.string().min(1),
});

/** Minutes a thread lives (the SDK sends `{ttl, strategy: "delete"}`; a bare number is read as its ttl); null: forever. */
const ThreadTtlSchema = z
  .union([z.number().positive(), z.object({ ttl: z.number().positive(), strategy: z.literal("delete").default("delete") })])
  .nullable()
  .transform((value) => (typeof value === "number" ? value : (value?.ttl ?? null)));

export const ThreadCreateSchema = z.object({
  thread_id: UuidSchema.optional(),
  ttl: ThreadTtlSchema.optional(),
  metadata: JsonObjectSchema.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).default("raise"),
  supersteps: z.array(z.object({ updates: z.array(SuperstepUpdateSchema).min(1) })).optional(),
});

// The SDK's update sends `metadata` only when given: a body with a `ttl` alone patches no metadata.
export const ThreadPatchSchema = z.preprocess(
  (body) =>
    body !== null && typeof body === "object" && !("metadata" in body) && "ttl" in body ? { ...body, metadata: {} } : body,
  z.object({ metadata: JsonObjectSchema, ttl: ThreadTtlSchema.optional() }),
);

export const ThreadPruneSchema = z.object({
  thread_ids: z.array(UuidSchema),
  strategy: z.enum(["delete", "keep_latest"]).default("delete"),
});

export const ThreadPruneResponseSchema = z.object({ pruned_count: z.int() });

const ThreadFilterSchema = z.object({
  ids: z.array(UuidSchema).optional(),
  metadata: JsonObjectSchema.optional(),
  values: JsonObjectSchema.optional(),
  status: ThreadStatusSchema.optional(),
});

export const ThreadSearchSchema = ThreadFilterSchema.extend({
  limit: Limit(1000, 10),
  offset: OffsetSchema,
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at"]).default("created_at"),
  sort_order: SortOrderSchema.default("desc"),
});

export const ThreadCountSchema = ThreadFilterSchema.omit({ ids: true });

const CheckpointRefSchema = z.object({
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string(),
  checkpoint_map: z.record(z.string(), z.string()).nullable(),
});

export const ThreadStateSchema: z.ZodType = z.lazy(() =>
  z.object({
    values: z.unknown(),
    next: z.array(z.string()),
    tasks: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        path: z.array(z.unknown()),
        error: z.string().nullable(),
        interrupts: z.array(z.object({ id: z.string().optional(), value: z.unknown() })),
        checkpoint: CheckpointRefSchema.nullable(),
        state: ThreadStateSchema.nullable(),
        result: z.unknown(),
      }),
    ),
    metadata: JsonObjectSchema,
    created_at: z.string().nullable(),
    checkpoint: CheckpointRefSchema.nullable(),
    parent_checkpoint: CheckpointRefSchema.nullable(),
    // Of the top level only: a subgraph's state in a task leaves them out.
    checkpoint_id: z.string().nullable().optional(),
    parent_checkpoint_id: z.string().nullable().optional(),
  }),
);

export const StateQuerySchema = z.object({ subgraphs: QueryBooleanSchema.default(false) });

export const StateAtCheckpointParamsSchema = ThreadIdParamsSchema.extend({ checkpoint_id: z.string().min(1) });

export const StateCheckpointBodySchema = z.object({
  checkpoint: CheckpointSelectorSchema,
  subgraphs: z.boolean().default(false),
});

export const StateUpdateSchema = z.object({
  values: z.unknown().optional(),
  as_node: z.string().min(1).optional(),
  checkpoint_id: z.string().optional(),
  checkpoint: CheckpointSelectorSchema.optional(),
});

export const StatePatchSchema = z.object({
  metadata: JsonObjectSchema,
  // The SDK sends only `metadata`; a checkpoint may name another than the latest.
  checkpoint_id: z.string().min(1).optional(),
  checkpoint: CheckpointSelectorSchema.optional(),
});

export const StateUpdateResponseSchema = z.object({
  checkpoint: CheckpointRefSchema.nullable(),
  configurable: CheckpointRefSchema.nullable(),
});

export const HistoryBodySchema = z.object({
  limit: Limit(1000, 10),
  // The SDK sends a RunnableConfig (`{configurable: {...}}`); a bare id or selector is accepted too.
  before: z.union([z.string(), z.object({ configurable: CheckpointSelectorSchema }), CheckpointSelectorSchema]).optional(),
  metadata: JsonObjectSchema.optional(),
  checkpoint: CheckpointSelectorSchema.optional(),
});

export const HistoryQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  before: z.string().optional(),
});
