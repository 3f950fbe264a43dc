import { z } from "zod";
import { JsonObject, Limit, Offset, QueryBoolean, Text } from "./common.js";
import { STORE_OPERATORS } from "../../storage/shared/memory-store-filter.js";

/** One level of a namespace: kept joined with "." by the backends and in GET's query, so it cannot hold one. */
const Label = Text.min(1, "namespace labels must not be empty").refine((label) => !label.includes("."), {
  message: "namespace labels must not contain '.'",
});

/** Where an item lives: at least one label. */
const Namespace = z.array(Label).min(1, "the namespace must have at least one label");

/** A namespace prefix: [] is every namespace. */
const NamespacePrefix = z.array(Label);

const Key = Text.min(1, "the key must not be empty");

export const StorePutBody = z.object({
  namespace: Namespace,
  key: Key,
  value: JsonObject,
  /** Fields to embed; false: none; absent or null: the configured `store.index.fields`. */
  index: z.union([z.literal(false), z.array(z.string().min(1))]).nullish(),
  /** Minutes to live; null: forever; absent: `store.ttl.default_ttl`. */
  ttl: z.number().positive().nullish(),
});

export const StoreGetQuery = z.object({
  /** Labels joined with ".", as the SDK sends them. */
  namespace: z
    .string()
    .transform((joined) => joined.split("."))
    .pipe(Namespace),
  key: Key,
  refresh_ttl: QueryBoolean.optional(),
});

export const StoreDeleteBody = z.object({ namespace: Namespace, key: Key });

/** A filter whose operator objects use only the operators the store knows (an unknown one is a 422, not a 500). */
const StoreFilter = JsonObject.superRefine((filter, context) => {
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

export const StoreSearchBody = z.object({
  namespace_prefix: NamespacePrefix.default([]),
  filter: StoreFilter.nullish(),
  limit: Limit(1000, 10),
  offset: Offset,
  /** Ranks by meaning with `store.index`; ignored without it. */
  query: z.string().nullish(),
  refresh_ttl: z.boolean().nullish(),
});

export const StoreNamespacesBody = z.object({
  prefix: NamespacePrefix.nullish(),
  suffix: NamespacePrefix.nullish(),
  max_depth: z.int().positive().nullish(),
  limit: Limit(1000, 100),
  offset: Offset,
});

export const StoreItem = z.object({
  namespace: z.array(z.string()),
  key: z.string(),
  value: JsonObject,
  created_at: z.string(),
  updated_at: z.string(),
});

export const StoreSearchResponse = z.object({
  items: z.array(StoreItem.extend({ score: z.number().nullable() })),
});

export const StoreNamespacesResponse = z.object({ namespaces: z.array(z.array(z.string())) });
