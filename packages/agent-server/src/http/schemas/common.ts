import { z } from "zod";

export const UuidSchema = z.uuid({ message: "must be a UUID" });

export const JsonObjectSchema = z.record(z.string(), z.unknown());

/** A string stored in a text column: no NUL character (PostgreSQL refuses it). */
export const TextSchema = z.string().refine((value) => !value.includes("\u0000"), { message: "must not contain NUL characters" });

export const SortOrderSchema = z.enum(["asc", "desc"]);

/** Query-string booleans: true/1/yes and false/0/no, case-insensitive. */
export const QueryBooleanSchema = z
  .enum(["true", "false", "1", "0", "yes", "no", "True", "False", "TRUE", "FALSE"])
  .transform((value) => ["true", "1", "yes"].includes(value.toLowerCase()));

export const Limit = (max: number, fallback: number) => z.int().min(1).max(max).default(fallback);

export const OffsetSchema = z.int().min(0).default(0);

export const ThreadStatusSchema = z.enum(["idle", "busy", "interrupted", "error"]);

/** null counts as absent: clients echo back checkpoints as the server sent them. */
const absentIfNull = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

export const CheckpointSelectorSchema = z.object({
  thread_id: absentIfNull(z.string()),
  checkpoint_id: absentIfNull(z.string()),
  checkpoint_ns: absentIfNull(z.string()),
  checkpoint_map: absentIfNull(z.record(z.string(), z.string())),
});
