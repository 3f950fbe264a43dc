import { z } from "zod";
import { JsonObjectSchema, Limit, OffsetSchema, QueryBooleanSchema, TextSchema } from "./common.js";
import { STORE_OPERATORS } from "../../storage/shared/memory-store-filter.js";

/** One level of a namespace: kept joined with "." by the backends and in GET's query, so it cannot hold one. */
const LabelSchema = TextSchema.min(1, "namespace labels must not be empty").refine((label) => !label.includes("."), {
  message: "namespace labels must not contain '.'",
});

/** Where an item lives: at least one label. */
const NamespaceSchema = z.array(LabelSchema).min(1, "the namespace must have at least one label");

/** A namespace prefix: [] is every namespace. */
const NamespacePrefixSchema = z.array(LabelSchema);

const KeySchema = TextSchema.min(1, "the key must not be empty");

export const StorePutBodySchema = z.object({
  namespace: NamespaceSchema,
  key: KeySchema,
  value: JsonObjectSchema,
  /** Fields to embed; false: none; absent or null: the configured `store.index.fields`. */
  index: z.union([z.literal(false), z.array(z.string().min(1))]).nullish(),
  /** Minutes to live; null: forever; absent: `store.ttl.default_ttl`. */
  ttl: z.number().positive().nullish(),
});

export const StoreGetQuerySchema = z.object({
  /** Labels joined with ".", as the SDK sends them. */
  namespace: z
    .string()
    .transform((joined) => joined.split("."))
    .pipe(NamespaceSchema),
  key: KeySchema,
  refresh_ttl: QueryBooleanSchema.optional(),
});

export const StoreDeleteBodySchema = z.object({ namespace: NamespaceSchema, key: KeySchema });

/** A filter whose operator objects use only the operators the store knows (an unknown one is a 422, not a 500). */
const StoreFilterSchema = JsonObjectSchema.superRefine((filter, context) => {
  for (const [field, condition] of Object.entries(filter)) {
    if (condition === null || typeof condition !== "object" || Array.isArray(condition)) continue;
    const operators = Object.keys(condition);
    if (!operators.some((key) => key.startsWith("$"))) continue;
    for (const operator of operators.filter((key) => !(STORE_OPERATORS as readonly string[]).includes(key))) {
      context.addIssue({
        code: "custom",
        path: [field, operator],
        message: `unsupported filter operator ${operator}: use ${STORE_OPERATORS.join(", ")}`,
      });
    }
  }
});

export const StoreSearchBodySchema = z.object({
  namespace_prefix: NamespacePrefixSchema.default([]),
  filter: StoreFilterSchema.nullish(),
  limit: Limit(1000, 10),
  offset: OffsetSchema,
  /** Ranks by meaning with `store.index`; ignored without it. */
  query: z.string().nullish(),
  refresh_ttl: z.boolean().nullish(),
});

export const StoreNamespacesBodySchema = z.object({
  prefix: NamespacePrefixSchema.nullish(),
  suffix: NamespacePrefixSchema.nullish(),
  max_depth: z.int().positive().nullish(),
  limit: Limit(1000, 100),
  offset: OffsetSchema,
});

export const StoreItemSchema = z.object({
  namespace: z.array(z.string()),
  key: z.string(),
  value: JsonObjectSchema,
  created_at: z.string(),
  updated_at: z.string(),
});

export const StoreSearchResponseSchema = z.object({
  items: z.array(StoreItemSchema.extend({ score: z.number().nullable() })),
});

export const StoreNamespacesResponseSchema = z.object({ namespaces: z.array(z.array(z.string())) });
