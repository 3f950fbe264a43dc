import { z } from "zod";

export { ReadOnly, Text, Uuid } from "../../domain/inputs/primitives.js";

export const Timestamp = z.string().describe("ISO 8601 date-time");

export const PageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
};

/** A list parameter given as CSV (`a,b`) or repeated (`?x=a&x=b`). */
export function csvList<T extends z.ZodType<unknown, string>>(item: T) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((value) =>
      (Array.isArray(value) ? value : [value])
        .flatMap((part) => part.split(","))
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item));
}

/** Query-string booleans: true/1/yes and false/0/no, case-insensitive. */
export const QueryBoolean = z
  .string()
  .toLowerCase()
  .pipe(z.enum(["true", "false", "1", "0", "yes", "no"]))
  .transform((value) => ["true", "1", "yes"].includes(value));

export const Detail = z.object({ detail: z.unknown() });

/** `{resources, offset}`: a page, and the offset of the next one. */
export const Page = <T extends z.ZodType>(item: T) => z.object({ resources: z.array(item), offset: z.int() });

/** The 404 answer of routes that look a resource up by id. */
export const NOT_FOUND_RESPONSE = { 404: { description: "Not found", schema: Detail } };
