/** A value as indented JSON; a string stays itself (an interrupt's question reads better unquoted). */
export function showValue(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

/**
 * The last 8 characters of an id: enough to tell threads and runs apart in a list (the full id is in the title). Not
 * the first ones: a UUIDv7 begins with its creation time, the same for every id made within a minute.
 */
export function shortId(id: string | null | undefined): string {
  return id ? id.slice(-8) : "";
}

/**
 * An answer typed by a person: JSON when it parses (`{"approved": true}`, `42`, `"text"`), otherwise the text
 * itself, so a plain `yes` needs no quotes.
 */
export function parseAnswer(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    return trimmed;
  }
}

/** A metadata filter typed as a JSON object; empty means no filter. Throws a reader-facing message otherwise. */
export function parseMetadataFilter(text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('The metadata filter must be a JSON object, e.g. {"graph_id": "agent"}');
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error('The metadata filter must be a JSON object, e.g. {"graph_id": "agent"}');
  }
  return parsed as Record<string, unknown>;
}

/**
 * The deployment's id, read from its stable URL on the router (`<router>/d/<id>`, api/platform.ts); undefined for
 * another URL.
 */
export function deploymentIdOf(deploymentUrl: string): string | undefined {
  try {
    const match = /\/d\/([^/]+)\/?$/.exec(new URL(deploymentUrl).pathname);
    return match ? decodeURIComponent(match[1]!) : undefined;
  } catch {
    return undefined;
  }
}
