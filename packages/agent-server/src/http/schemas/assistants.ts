import { z } from "zod";
import { JsonObjectSchema, Limit, OffsetSchema, QueryBooleanSchema, SortOrderSchema, TextSchema, UuidSchema } from "./common.js";

export const AssistantIdParamsSchema = z.object({ assistant_id: z.string().min(1) });

export const AssistantSchema = z.object({
  assistant_id: UuidSchema,
  graph_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  config: JsonObjectSchema,
  context: JsonObjectSchema,
  metadata: JsonObjectSchema,
  version: z.int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const AssistantVersionSchema = AssistantSchema.omit({ updated_at: true });

export const AssistantCreateSchema = z.object({
  assistant_id: UuidSchema.optional(),
  graph_id: TextSchema.min(1),
  config: JsonObjectSchema.optional(),
  context: JsonObjectSchema.optional(),
  metadata: JsonObjectSchema.optional(),
  name: TextSchema.optional(),
  description: TextSchema.nullable().optional(),
  if_exists: z.enum(["raise", "do_nothing"]).default("raise"),
});

export const AssistantPatchSchema = z.object({
  graph_id: TextSchema.min(1).optional(),
  config: JsonObjectSchema.optional(),
  context: JsonObjectSchema.optional(),
  metadata: JsonObjectSchema.optional(),
  name: TextSchema.optional(),
  description: TextSchema.nullable().optional(),
});

const AssistantFilterSchema = z.object({
  graph_id: z.string().optional(),
  name: z.string().optional(),
  metadata: JsonObjectSchema.optional(),
});

export const AssistantSearchSchema = AssistantFilterSchema.extend({
  limit: Limit(1000, 10),
  offset: OffsetSchema,
  sort_by: z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]).default("created_at"),
  sort_order: SortOrderSchema.default("desc"),
});

export const AssistantCountSchema = AssistantFilterSchema;

export const AssistantVersionsQuerySchema = z.object({
  limit: Limit(1000, 10),
  offset: OffsetSchema,
  metadata: JsonObjectSchema.optional(),
});

export const AssistantSetLatestSchema = z.object({ version: z.int().min(1) });

export const AssistantDeleteQuerySchema = z.object({ delete_threads: QueryBooleanSchema.default(false) });

export const AssistantGraphQuerySchema = z.object({
  // Digits are a depth before they are a boolean: `xray=1` expands one level of subgraphs, `xray=true` all of them.
  xray: z.union([z.string().regex(/^\d+$/, "must be a boolean or a depth").transform(Number), QueryBooleanSchema]).default(false),
});

export const SubgraphsParamsSchema = AssistantIdParamsSchema.extend({ namespace: z.string().min(1).optional() });

export const SubgraphsQuerySchema = z.object({ recurse: QueryBooleanSchema.default(false) });
