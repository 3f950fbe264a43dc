import { z } from "zod";

export const Uuid = z.uuid({ message: "must be a UUID" });

/** A string stored in a text column: no NUL character (PostgreSQL refuses it). */
export const Text = z.string().refine((value) => !value.includes("\u0000"), { message: "must not contain NUL characters" });

export const Timestamp = z.string().describe("ISO 8601 date-time");

export const PageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
};

/** A list parameter given as CSV (`a,b`) or repeated (`?x=a&x=b`). */
export function csvList<T extends z.ZodType<unknown, string>>(item: T) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((value) => (Array.isArray(value) ? value : [value]).flatMap((part) => part.split(",")).map((part) => part.trim()).filter(Boolean))
    .pipe(z.array(item));
}

/** Query-string booleans: true/1/yes and false/0/no, case-insensitive. */
export const QueryBoolean = z
  .string()
  .toLowerCase()
  .pipe(z.enum(["true", "false", "1", "0", "yes", "no"]))
  .transform((value) => ["true", "1", "yes"].includes(value));

/** A field the server sets: accepted by the schema so the rule check can refuse it with a 400 naming it. */
export const ReadOnly = z.unknown().optional().describe("Read-only: a request that sets it is refused (400)");

export const Detail = z.object({ detail: z.unknown() });

/** `{resources, offset}`: a page, and the offset of the next one. */
export const Page = <T extends z.ZodType>(item: T) => z.object({ resources: z.array(item), offset: z.int() });
