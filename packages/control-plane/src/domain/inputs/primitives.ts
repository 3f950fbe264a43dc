import { z } from "zod";

export const Uuid = z.uuid({ message: "must be a UUID" });

/** A string stored in a text column: no NUL character (PostgreSQL refuses it). */
export const Text = z.string().refine((value) => !value.includes("\u0000"), { message: "must not contain NUL characters" });

/** A field the server sets: accepted by the schema so the rule check can refuse it with a 400 naming it. */
export const ReadOnly = z.unknown().optional().describe("Read-only: a request that sets it is refused (400)");
