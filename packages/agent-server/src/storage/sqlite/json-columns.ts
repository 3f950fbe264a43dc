import type { JsonObject } from "../types.js";

/** Parses a JSON text column; NULL stays null. */
export function parseJsonColumn<T = JsonObject>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export function toJsonColumn(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}
