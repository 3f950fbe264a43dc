// JSON parameters for JSONB columns. pg parses JSONB results by itself.

/**
 * The escapes JSONB refuses, when not themselves escaped (an even number of
 * backslashes before them): U+0000, and surrogates. JSON.stringify writes a
 * surrogate as an escape only when it is unpaired (pairs stay raw characters),
 * so every surrogate escape it produced is a lone one.
 */
const REFUSED_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(0000|d[89a-f][0-9a-f]{2})/gi;

/**
 * JSON text for a JSONB parameter. JSONB cannot hold U+0000 (no PostgreSQL
 * text can) nor a lone surrogate (not valid Unicode): U+0000 is dropped, as
 * LangGraph's own Postgres saver does, and a lone surrogate becomes U+FFFD, as
 * in any UTF-8 encoding. Refusing the write instead would fail a request or
 * a run over one character that SQLite stores as is.
 */
export function jsonb(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  if (!text.includes("\\u")) return text;
  return text.replace(REFUSED_ESCAPE, (_match, backslashes: string, code: string) =>
    code === "0000" ? backslashes : `${backslashes}\ufffd`,
  );
}

/** Like jsonb, but SQL NULL for null or undefined (nullable columns such as threads.values). */
export function jsonbOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : jsonb(value);
}
