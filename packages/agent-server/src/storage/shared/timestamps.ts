/** Now, as the ISO-8601 UTC text both backends store and return timestamps in. */
export function nowIso(): string {
  return new Date().toISOString();
}
