import { z } from "zod";
import { CheckpointSelector, JsonObject, Limit, Offset, QueryBoolean, SortOrder, ThreadStatus, Uuid } from "./common.js";

export const ThreadIdParams = z.object({ thread_id: Uuid });

export const Thread = z.object({
  thread_id: Uuid,
  created_at: z.string(),
  updated_at: z.string(),
  metadata: JsonObject,
  status: ThreadStatus,
  config: JsonObject,
  values: JsonObject.nullable(),
  interrupts: z.record(z.string(), z.array(z.object({ id: z.string().optional(), value: z.unknown() }))),
});

const SuperstepUpdate = z.object({
  values: z.unknown().optional(),
  command: JsonObject.nullable().optional(),
  as_node: z.string().min(1),
});

/** Minutes a thread lives (the SDK sends `{ttl, strategy: "delete"}`; a bare number is read as its ttl); null: forever. */
const ThreadTtl = z
  .union([z.number().positive(), z.object({ ttl: z.number().positive(), strategy: z.literal("delete").default("delete") })])
  .nullable()
  .transform((value) => (typeof value === "number" ? value : (value?.ttl ?? null)));

export const ThreadCreate = z.object({
  thread_id: Uuid.optional(),
  ttl: ThreadTtl.optional(),
  metadata: JsonObject.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).default("raise"),
  supersteps: z.array(z.object({ updates: z.array(SuperstepUpdate).min(1) })).optional(),
});

// The SDK's update sends `metadata` only when given: a body with a `ttl` alone patches no metadata.
export const ThreadPatch = z.preprocess(
  (body) =>
    body !== null && typeof body === "object" && !("metadata" in body) && "ttl" in body ? { ...body, metadata: {} } : body,
  z.object({ metadata: JsonObject, ttl: ThreadTtl.optional() }),
);

export const ThreadPrune = z.object({
  thread_ids: z.array(Uuid),
  strategy: z.enum(["delete", "keep_latest"]).default("delete"),
});

export const ThreadPruneResponse = z.object({ pruned_count: z.int() });

const ThreadFilter = z.object({
  ids: z.array(Uuid).optional(),
  metadata: JsonObject.optional(),
  values: JsonObject.optional(),
  status: ThreadStatus.optional(),
});

export const ThreadSearch = ThreadFilter.extend({
  limit: Limit(1000, 10),
  offset: Offset,
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at"]).default("created_at"),
  sort_order: SortOrder.default("desc"),
});

export const ThreadCount = ThreadFilter.omit({ ids: true });

const CheckpointRef = z.object({
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string(),
  checkpoint_map: z.record(z.string(), z.string()).nullable(),
});

export const ThreadState: z.ZodType = z.lazy(() =>
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
        checkpoint: CheckpointRef.nullable(),
        state: ThreadState.nullable(),
        result: z.unknown(),
      }),
    ),
    metadata: JsonObject,
    created_at: z.string().nullable(),
    checkpoint: CheckpointRef.nullable(),
    parent_checkpoint: CheckpointRef.nullable(),
    // Of the top level only: a subgraph's state in a task leaves them out.
    checkpoint_id: z.string().nullable().optional(),
    parent_checkpoint_id: z.string().nullable().optional(),
  }),
);

export const StateQuery = z.object({ subgraphs: QueryBoolean.default(false) });

export const StateAtCheckpointParams = ThreadIdParams.extend({ checkpoint_id: z.string().min(1) });

export const StateCheckpointBody = z.object({
  checkpoint: CheckpointSelector,
  subgraphs: z.boolean().default(false),
});

export const StateUpdate = z.object({
  values: z.unknown().optional(),
  as_node: z.string().min(1).optional(),
  checkpoint_id: z.string().optional(),
  checkpoint: CheckpointSelector.optional(),
});

export const StatePatch = z.object({
  metadata: JsonObject,
  // The SDK sends only `metadata`; a checkpoint may name another than the latest.
  checkpoint_id: z.string().min(1).optional(),
  checkpoint: CheckpointSelector.optional(),
});

export const StateUpdateResponse = z.object({ checkpoint: CheckpointRef.nullable(), configurable: CheckpointRef.nullable() });

export const HistoryBody = z.object({
  limit: Limit(1000, 10),
  // The SDK sends a RunnableConfig (`{configurable: {...}}`); a bare id or selector is accepted too.
  before: z.union([z.string(), z.object({ configurable: CheckpointSelector }), CheckpointSelector]).optional(),
  metadata: JsonObject.optional(),
  checkpoint: CheckpointSelector.optional(),
});

export const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  before: z.string().optional(),
});
