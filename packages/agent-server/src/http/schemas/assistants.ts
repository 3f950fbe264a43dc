import { z } from "zod";
import { JsonObject, Limit, Offset, QueryBoolean, SortOrder, Text, Uuid } from "./common.js";

export const AssistantIdParams = z.object({ assistant_id: z.string().min(1) });

export const Assistant = z.object({
  assistant_id: Uuid,
  graph_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  config: JsonObject,
  context: JsonObject,
  metadata: JsonObject,
  version: z.int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const AssistantVersion = Assistant.omit({ updated_at: true });

export const AssistantCreate = z.object({
  assistant_id: Uuid.optional(),
  graph_id: Text.min(1),
  config: JsonObject.optional(),
  context: JsonObject.optional(),
  metadata: JsonObject.optional(),
  name: Text.optional(),
  description: Text.nullable().optional(),
  if_exists: z.enum(["raise", "do_nothing"]).default("raise"),
});

export const AssistantPatch = z.object({
  graph_id: Text.min(1).optional(),
  config: JsonObject.optional(),
  context: JsonObject.optional(),
  metadata: JsonObject.optional(),
  name: Text.optional(),
  description: Text.nullable().optional(),
});

const AssistantFilter = z.object({
  graph_id: z.string().optional(),
  name: z.string().optional(),
  metadata: JsonObject.optional(),
});

export const AssistantSearch = AssistantFilter.extend({
  limit: Limit(1000, 10),
  offset: Offset,
  sort_by: z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]).default("created_at"),
  sort_order: SortOrder.default("desc"),
});

export const AssistantCount = AssistantFilter;

export const AssistantVersionsQuery = z.object({
  limit: Limit(1000, 10),
  offset: Offset,
  metadata: JsonObject.optional(),
});

export const AssistantSetLatest = z.object({ version: z.int().min(1) });

export const AssistantDeleteQuery = z.object({ delete_threads: QueryBoolean.default(false) });

export const AssistantGraphQuery = z.object({
  // Digits are a depth before they are a boolean: `xray=1` expands one level of subgraphs, `xray=true` all of them.
  xray: z.union([z.string().regex(/^\d+$/, "must be a boolean or a depth").transform(Number), QueryBoolean]).default(false),
});

export const SubgraphsParams = AssistantIdParams.extend({ namespace: z.string().min(1).optional() });

export const SubgraphsQuery = z.object({ recurse: QueryBoolean.default(false) });
