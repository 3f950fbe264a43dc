// JSON parameters for JSONB columns. pg parses JSONB results by itself.

/** An escaped U+0000 in JSON text, not itself escaped (preceded by an even number of backslashes). */
const ESCAPED_NUL = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * JSON text for a JSONB parameter. JSONB cannot hold U+0000 (PostgreSQL text
 * never can), so it is dropped from strings and keys, as LangGraph's own
 * Postgres saver does: refusing the write would fail a run over one character.
 */
export function jsonb(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.includes("\\u0000") ? text.replace(ESCAPED_NUL, "$1") : text;
}

/** Like jsonb, but SQL NULL for null or undefined (nullable columns such as threads.values). */
export function jsonbOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : jsonb(value);
}
